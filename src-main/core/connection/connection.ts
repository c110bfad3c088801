/**
 * One connection to the service for a given configuration: ServiceClient -> TokenManager ->
 * ScreenpopEngine (direct WebSocket, plus the webhook relay when one is configured). The app builds
 * a new one whenever the connection settings change, and stops the old one.
 */
import {
  ServiceClient,
  type ListResult,
  type PbxContact,
  type PbxGroup,
} from '../../../src-shared/api/service-client.ts';
import { UacstaCalls } from '../calls/uacsta-match.ts';
import { TokenManager, type Credentials } from '../api/token-manager.ts';
import type {
  CallAnswer,
  CallInfo,
  DialRequest,
  TransferRequest,
  UacstaOperation,
  UacstaRequest,
} from '../../../src-shared/api/call-api.ts';
import type { DialTicket, OwnCall } from '../events/own-dials.ts';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { ScreenpopEngine } from '../engine.ts';
import type { ConnectionStatus, EventSource, WakeReason } from '../events/contracts.ts';
import { saidStatus, StatusHolder } from '../events/status.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import type { CursorStore } from '../relay-client/cursor-store.ts';
import { relayFilterFor, relayOptIns } from '../relay-client/filter.ts';
import type { FeatureStatus } from '../events/features.ts';
import type { Notice } from '../events/notices.ts';
import { RelayEventSource } from '../relay-client/relay-source.ts';
import type { Settings } from '../settings/types.ts';
import type { DirectoryEntry } from '../contacts/directory.ts';
import type { CallRecordEvent, DismissEvent, PopEvent } from '../ports/ports.ts';
import type { CreateSocket } from '../../../src-shared/stream/socket.ts';
import { phrase } from '../../../src-shared/i18n/phrase.ts';
import { isLoopbackHost } from '../../../src-shared/net/loopback.ts';
import { wireFor } from '../../../src-shared/wire/index.ts';
import type { RelayIdentity } from '../../../src-shared/relay/relay-protocol.ts';
import type { ConnectionProbe } from './test-connection.ts';

/** What a Test connection is about: the phone system, its address and the API key (Client ID). */
export interface ProbeTarget {
  phoneSystem?: Settings['phoneSystem'];
  baseUrl: string;
  apiKey: string;
}

/** What the app needs of an engine (ScreenpopEngine has it all). */
export interface EngineLike {
  start(): void;
  stop(): Promise<void>;
  wake(reason: WakeReason): void;
  onPop(listener: (pop: PopEvent) => void): () => void;
  onDismiss(listener: (dismiss: DismissEvent) => void): () => void;
  /** A call the user answered ended on the number that answered it. */
  onHangup?(listener: (hangup: DismissEvent) => void): () => void;
  /** Calls' records once they ended (History's talk time), where the phone system sends them. */
  onCallRecord?(listener: (record: CallRecordEvent) => void): () => void;
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  status(): ConnectionStatus;
  onNotice(listener: (notice: Notice) => void): () => void;
  onFeatureStatus(listener: (statuses: FeatureStatus[]) => void): () => void;
  featureStatuses(): FeatureStatus[];
  /** A dial is about to be sent: its ring is the user's own call, not a pop (own-dials.ts). */
  expectOwnDial?(number: string): DialTicket;
  /** Rings of calls the user dialled from Screenpop, never popped: "Calling <number>…". */
  onOwnCall?(listener: (call: OwnCall) => void): () => void;
}

/**
 * The phone system's call API over this connection's sign-in (the token manager: refresh and one
 * retry on an expired token; no token of its own): Yeastar P-Series only
 * (docs/phone-systems/yeastar-p-series.md section 10). Failures are the client's ServiceErrors.
 */
export interface ConnectionCalls {
  dial(request: DialRequest): Promise<Required<CallAnswer>>;
  transfer(request: TransferRequest): Promise<CallAnswer>;
  hangup(channelId: string): Promise<CallAnswer>;
  query(by: { callId: string } | { extension: string }): Promise<CallInfo[]>;
  /** uaCSTA accept/refuse on the extension's desk phone (section 10, "Remote answer"). */
  uacsta?(operation: UacstaOperation, request: UacstaRequest): Promise<void>;
}

export interface Connection {
  engine: EngineLike;
  /** The whole extension list, through the token manager (refresh and one retry on 10002). */
  fetchExtensions(): Promise<DirectoryEntry[]>;
  /**
   * The PBX's queues and ring groups, and its company contacts, through the same token manager
   * (no token of their own): Yeastar P-Series only (docs/phone-systems/yeastar-p-series.md
   * section 9); absent where the phone system has no such lists.
   */
  fetchGroups?(): Promise<PbxGroup[]>;
  fetchCompanyContacts?(): Promise<PbxContact[]>;
  /** The call API, where the phone system has one (absent on the standard service). */
  calls?: ConnectionCalls;
  /** Remote answer's table (uaCSTA reports and rings), while "Answer from Screenpop" is on. */
  uacsta?: UacstaCalls;
  wake(reason: WakeReason): void;
  /** The user asks to try again now (after fixing the key, the allowlist or the network). */
  retry(): void;
  /** Ends it: the stream, then the tokens (revoked where the phone system can, within a limit). */
  stop(): Promise<void>;
  /**
   * Test connection on the application this connection already signs in with: a probe that uses
   * the running token (no new get_token, which would take one of the application's 8 tokens, or
   * end this computer's own token on a PBX that keeps one per application); null for any other.
   */
  runningProbe?(target: ProbeTarget): ConnectionProbe | null;
  /** Organisation mode: who the relay last said this is (null until it has). */
  identity?(): RelayIdentity | null;
  /** Organisation mode: each time the relay says who this is (a new session, a changed grant). */
  onIdentity?(listener: (identity: RelayIdentity) => void): () => void;
}

/**
 * After an unexpected error (the last resort's fault) the connection is rebuilt from its factory,
 * at most once per this interval: the tray app's supervisor and the headless runner alike.
 */
export const REBUILD_MIN_INTERVAL_MS = 30_000;

/**
 * What the directory reads over the connection in force (`current()`): the extension list, and the
 * PBX's groups and company contacts where the phone system has them (none where it has not). With
 * no connection each is refused ("not connected"): the directory keeps what it had and tries later.
 */
export function directoryFetchers(current: () => Connection | null | undefined): {
  fetchExtensions: () => Promise<DirectoryEntry[]>;
  fetchGroups: () => Promise<PbxGroup[]>;
  fetchCompanyContacts: () => Promise<PbxContact[]>;
} {
  const over = <T>(read: (c: Connection) => Promise<T>): Promise<T> => {
    const c = current();
    return c ? read(c) : Promise.reject(new Error('not connected'));
  };
  return {
    fetchExtensions: () => over((c) => c.fetchExtensions()),
    fetchGroups: () => over((c) => c.fetchGroups?.() ?? Promise.resolve([])),
    fetchCompanyContacts: () => over((c) => c.fetchCompanyContacts?.() ?? Promise.resolve([])),
  };
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
  /** Heartbeat interval of the event streams (the runner's --heartbeat-sec); default 25 s. */
  heartbeatMs?: number;
  /**
   * The way out for this configuration's API calls and both sockets: proxy and trusted CAs
   * (net/transport.ts's NetTransport, made by network.ts's transportFor). Required, so that no
   * connection can go around the proxy or the CA file by accident.
   */
  transport: (settings: Settings) => Transport;
}

/** What a connection needs of net/transport.ts's NetTransport. */
export interface Transport {
  fetch: typeof fetch;
  createSocket: CreateSocket;
}

/**
 * The tenant's name for the relay's stream path: the relayTenant setting when set, else the first
 * label of the service's host name (acme.example.com -> acme), the convention of hosted tenants.
 * A service reached by IP address or localhost has no such label: null, never a guess. (Demo mode
 * passes the simulator's own tenant in relayTenant.)
 */
export function relayTenantFor(
  settings: Pick<Settings, 'relayTenant'>,
  baseUrl: string,
): string | null {
  const chosen = settings.relayTenant.trim();
  if (chosen) return chosen;
  const host = new URL(baseUrl).hostname;
  if (isLoopbackHost(host) || host.startsWith('[') || /^\d+(\.\d+){3}$/.test(host)) return null;
  const label = host.split('.')[0];
  return label ? label : null;
}

/** What the relay reports while its tenant is not known: the user must set it in Settings. */
export const RELAY_TENANT_UNKNOWN: ConnectionStatus = saidStatus(
  'needs-attention',
  [phrase('status.relay-tenant-unknown')],
  [phrase('status.relay-tenant-unknown-remedy')],
);

/**
 * Stands in for the relay when it cannot be used: no socket, no frames, only its status, so that
 * the engine's combined status tells the user why (degraded beside the direct WebSocket,
 * needs-attention when the relay is the only source).
 */
function unavailableRelaySource(status: ConnectionStatus, logger: Logger): EventSource {
  const current = new StatusHolder(logger);
  return {
    name: 'relay',
    start: () => current.set(status),
    stop: async () => {},
    wake: () => {},
    onFrame: () => () => {},
    onStatus: (listener) => current.on(listener),
    status: () => current.get(),
  };
}

/** A list as read, saying in the log when the PBX had more than the cap (ServiceClient's). */
function listed<T>(result: ListResult<T>, what: string, logger: Logger): T[] {
  if (!result.complete)
    logger.warn(`the PBX has more ${what} than are read; the first ones are used`, {
      kept: result.items.length,
    });
  return result.items;
}

export function serviceConnectionFactory(deps: ServiceConnectionDeps): ConnectionFactory {
  return ({ baseUrl, settings, credentials }) => {
    const { clock, logger, secrets } = deps;
    const transport = deps.transport(settings);
    // The phone system's token calls, stream and event codes (src-shared/wire/).
    const wire = wireFor(settings.phoneSystem);
    const client = new ServiceClient({
      baseUrl,
      clock,
      logger,
      secrets,
      api: wire.api,
      fetch: transport.fetch,
    });
    const tokens = new TokenManager({ client, credentials, clock, logger, secrets });
    const user = {
      extensions: settings.extensions,
      dids: settings.dids,
      defaultRegion: settings.defaultRegion,
    };
    const relayUrl = settings.relayUrl.trim();
    const useRelay = Boolean(relayUrl) && settings.eventSource !== 'direct';
    const tenant = useRelay ? relayTenantFor(settings, baseUrl) : null;
    if (useRelay && tenant === null)
      logger.warn('relay left out: its tenant is not known; set the relay tenant in Settings', {
        host: new URL(baseUrl).host,
      });
    const createRelaySource = !useRelay
      ? undefined
      : tenant === null
        ? () => unavailableRelaySource(RELAY_TENANT_UNKNOWN, logger)
        : () =>
            new RelayEventSource({
              relayUrl,
              tenant,
              tokens,
              // The relay passes codes other than 30011 only as opt-ins (relayOptIns).
              filter: relayFilterFor(user, relayOptIns(settings.features, wire)),
              clock,
              logger,
              ...(deps.relayCursorStore ? { cursorStore: deps.relayCursorStore } : {}),
              createSocket: transport.createSocket,
              ...(deps.heartbeatMs !== undefined ? { heartbeatMs: deps.heartbeatMs } : {}),
            });
    // Remote answer (uaCSTA): its reports come only on the direct stream (the relay carries none).
    const uacsta =
      settings.answerFromDeskPhone &&
      settings.connectionMode !== 'organisation' &&
      settings.eventSource !== 'relay' &&
      wire.stream.remoteAnswer
        ? new UacstaCalls(() => clock.monotonic())
        : undefined;
    const engine = new ScreenpopEngine({
      baseUrl,
      tokens,
      clock,
      logger,
      user,
      staleRingMs: settings.staleRingSec * 1000,
      features: settings.features,
      wire,
      ...(uacsta && { uacsta }),
      mode: settings.eventSource,
      ...(deps.heartbeatMs !== undefined ? { heartbeatMs: deps.heartbeatMs } : {}),
      ...(createRelaySource ? { createRelaySource } : {}),
      createSocket: transport.createSocket,
      fetch: transport.fetch,
    });
    return {
      engine,
      ...(uacsta && { uacsta }),
      fetchExtensions: () => tokens.call((token) => client.listExtensions(token)),
      ...(wire.api.pbxLists && {
        fetchGroups: () =>
          tokens.call((token) => client.listGroups(token)).then((r) => listed(r, 'groups', logger)),
        fetchCompanyContacts: () =>
          tokens
            .call((token) => client.listCompanyContacts(token))
            .then((r) => listed(r, 'company contacts', logger)),
      }),
      ...(wire.api.calls && {
        calls: {
          dial: (request) => tokens.call((token) => client.dial(token, request)),
          transfer: (request) => tokens.call((token) => client.transfer(token, request)),
          hangup: (channelId) => tokens.call((token) => client.hangup(token, channelId)),
          query: (by) => tokens.call((token) => client.queryCalls(token, by)),
          uacsta: (operation, request) =>
            tokens.call((token) => client.uacsta(token, operation, request)),
        },
      }),
      wake(reason) {
        tokens.wake(reason);
        engine.wake(reason);
      },
      retry() {
        tokens.retry();
        engine.wake('user');
      },
      async stop() {
        await engine.stop();
        await tokens.release();
      },
      runningProbe(target) {
        const same =
          target.baseUrl === baseUrl &&
          target.apiKey === settings.apiKey &&
          (target.phoneSystem ?? 'standard') === settings.phoneSystem;
        // Waiting for a person (a refused secret, an address, the API off): the test is how they
        // check their fix, so it signs in afresh. A held sign-in (sign-in-guard.ts) is not that:
        // a fresh one would only end the other computer's token again.
        if (!same || tokens.health().state === 'needs-attention') return null;
        return {
          getToken: () => tokens.getAccessToken(),
          listExtensions: (token) => client.listExtensions(token),
        };
      },
    };
  };
}
