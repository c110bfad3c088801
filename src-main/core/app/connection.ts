/**
 * One connection to the service for a given configuration: ServiceClient -> TokenManager ->
 * ScreenpopEngine (direct WebSocket, plus the webhook relay when one is configured). The app builds
 * a new one whenever the connection settings change, and stops the old one.
 */
import { ServiceClient } from '../api/service-client.ts';
import { TokenManager, type Credentials } from '../api/token-manager.ts';
import type { Clock } from '../clock.ts';
import { ScreenpopEngine } from '../engine.ts';
import type { ConnectionStatus, WakeReason } from '../events/contracts.ts';
import type { Logger, SecretRegistry } from '../log.ts';
import type { CursorStore } from '../relay-client/cursor-store.ts';
import { relayFilterFor } from '../relay-client/filter.ts';
import { RelayEventSource } from '../relay-client/relay-source.ts';
import type { Settings } from '../settings/types.ts';
import type { DirectoryEntry } from './directory.ts';
import type { DismissEvent, PopEvent } from './ports.ts';

/** What the app needs of an engine (ScreenpopEngine has it all). */
export interface EngineLike {
  start(): void;
  stop(): Promise<void>;
  wake(reason: WakeReason): void;
  onPop(listener: (pop: PopEvent) => void): () => void;
  onDismiss(listener: (dismiss: DismissEvent) => void): () => void;
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  status(): ConnectionStatus;
}

export interface Connection {
  engine: EngineLike;
  /** The whole extension list, through the token manager (refresh and one retry on 10002). */
  fetchExtensions(): Promise<DirectoryEntry[]>;
  wake(reason: WakeReason): void;
  /** The user asks to try again now (after fixing the key, the allowlist or the network). */
  retry(): void;
  stop(): Promise<void>;
}

export interface ConnectionConfig {
  baseUrl: string;
  settings: Settings;
  credentials: () => Promise<Credentials | null>;
}

export type ConnectionFactory = (config: ConnectionConfig) => Connection;

export interface ServiceConnectionDeps {
  clock: Clock;
  logger: Logger;
  secrets: SecretRegistry;
  /** Where the relay client keeps its cursor between runs. */
  relayCursorStore?: CursorStore;
}

/**
 * The tenant's name for the relay's stream path. Settings carry no tenant field, so it is the first
 * label of the service's host name (acme.example.com -> acme), the convention of hosted tenants.
 */
export function tenantOf(baseUrl: string): string {
  const host = new URL(baseUrl).hostname;
  return /^\d+(\.\d+){3}$/.test(host) || host === 'localhost'
    ? 'acme'
    : (host.split('.')[0] ?? host);
}

export function serviceConnectionFactory(deps: ServiceConnectionDeps): ConnectionFactory {
  return ({ baseUrl, settings, credentials }) => {
    const { clock, logger, secrets } = deps;
    const client = new ServiceClient({ baseUrl, clock, logger, secrets });
    const tokens = new TokenManager({ client, credentials, clock, logger, secrets });
    const user = {
      extensions: settings.extensions,
      dids: settings.dids,
      defaultRegion: settings.defaultRegion,
    };
    const relayUrl = settings.relayUrl.trim();
    const createRelaySource =
      relayUrl && settings.eventSource !== 'direct'
        ? () =>
            new RelayEventSource({
              relayUrl,
              tenant: tenantOf(baseUrl),
              tokens,
              filter: relayFilterFor(user),
              clock,
              logger,
              ...(deps.relayCursorStore ? { cursorStore: deps.relayCursorStore } : {}),
            })
        : undefined;
    const engine = new ScreenpopEngine({
      baseUrl,
      tokens,
      clock,
      logger,
      user,
      staleRingMs: settings.staleRingSec * 1000,
      mode: settings.eventSource,
      ...(createRelaySource ? { createRelaySource } : {}),
    });
    return {
      engine,
      fetchExtensions: () => tokens.call((token) => client.listExtensions(token)),
      wake(reason) {
        tokens.wake();
        engine.wake(reason);
      },
      retry() {
        tokens.retry();
        engine.wake('user');
      },
      async stop() {
        await engine.stop();
        tokens.stop();
      },
    };
  };
}
