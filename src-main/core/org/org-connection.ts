/**
 * A connection in organisation mode (docs/relay-protocol.md 2.2): the relay alone, with the
 * organisation's credential (OrgTokenSource) instead of the phone system's. There is no service
 * client, no token manager and no API key: the machine never talks to the phone system, and the
 * relay decides whose calls come (the identity in `ready` becomes the user's numbers here).
 */
import { CALL_RECORD } from '../../../src-shared/wire/event-codes.ts';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { RelayIdentity } from '../../../src-shared/relay/relay-protocol.ts';
import type { Connection, ConnectionFactory, Transport } from '../connection/connection.ts';
import { ScreenpopEngine } from '../engine.ts';
import { noticeTopics } from '../events/features.ts';
import type { TokenSource } from '../events/contracts.ts';
import type { CursorStore } from '../relay-client/cursor-store.ts';
import { RelayEventSource, relayHttpUrl } from '../relay-client/relay-source.ts';
import type { Settings } from '../settings/types.ts';
import type { OrganisationAccount } from './org-account.ts';
import { RelayCallControl } from './relay-call-control.ts';
import type { CallControl } from '../ports/call-control.ts';

export interface OrgConnectionConfig {
  relayUrl: string;
  tenant: string;
  settings: Settings;
  tokens: TokenSource;
}

export interface OrgConnectionDeps {
  clock: Clock;
  logger: Logger;
  transport: Transport;
  relayCursorStore?: CursorStore;
  heartbeatMs?: number;
  /** Who is signed in, each time the relay says (a new session, a changed grant). */
  onIdentity?: (identity: RelayIdentity) => void;
}

export function organisationConnection(
  config: OrgConnectionConfig,
  deps: OrgConnectionDeps,
): Connection & { relayCalls: CallControl } {
  const { settings } = config;
  const { clock, logger, transport } = deps;
  // Until the relay has said who this is, nothing is the user's: no setting decides it.
  const user = {
    extensions: [] as string[],
    dids: [] as string[],
    defaultRegion: settings.defaultRegion,
  };
  // The relay source reports the identity; the engine it feeds is made just below.
  const holder: { engine?: ScreenpopEngine } = {};
  const identities = new Emitter<[RelayIdentity]>(logger, 'identity');
  let current: RelayIdentity | null = null;
  const onIdentity = (identity: RelayIdentity) => {
    logger.info('signed in to the relay', { user: identity.user, via: identity.via });
    current = identity;
    holder.engine?.updateUser({
      extensions: identity.extensions,
      dids: identity.dids,
      defaultRegion: settings.defaultRegion,
    });
    deps.onIdentity?.(identity);
    identities.emit(identity);
  };
  const e = new ScreenpopEngine({
    // The server clock is read from the relay (its HTTP Date header): the phone system is not ours to ask.
    baseUrl: relayHttpUrl(config.relayUrl, '/healthz'),
    tokens: config.tokens,
    clock,
    logger,
    user,
    staleRingMs: settings.staleRingSec * 1000,
    features: settings.features,
    mode: 'relay',
    createRelaySource: () =>
      new RelayEventSource({
        relayUrl: config.relayUrl,
        tenant: config.tenant,
        tokens: config.tokens,
        // The relay sends this user's own events whatever the hello says; the hello says which
        // kinds (features) are wanted, and the records of the user's calls (History's talk time)
        // where the tenant's phone system makes them (none on a standard tenant).
        filter: {
          extensions: [],
          dids: [],
          events: [...noticeTopics(settings.features), CALL_RECORD],
        },
        clock,
        logger,
        onIdentity,
        createSocket: transport.createSocket,
        ...(deps.relayCursorStore ? { cursorStore: deps.relayCursorStore } : {}),
        ...(deps.heartbeatMs !== undefined ? { heartbeatMs: deps.heartbeatMs } : {}),
      }),
    createSocket: transport.createSocket,
    fetch: transport.fetch,
    ...(deps.heartbeatMs !== undefined ? { heartbeatMs: deps.heartbeatMs } : {}),
  });
  holder.engine = e;
  return {
    engine: e,
    // Colleagues' names come from the phone system's list, which this machine may not read.
    fetchExtensions: () => Promise.resolve([]),
    wake: (reason) => e.wake(reason),
    retry: () => e.wake('user'),
    stop: () => e.stop(),
    identity: () => current,
    onIdentity: (listener) => identities.on(listener),
    // Calls go through the relay (docs/relay-protocol.md 2.5) with the same credential.
    relayCalls: new RelayCallControl(
      { relayUrl: config.relayUrl, tenant: config.tenant },
      { fetch: transport.fetch, tokens: config.tokens, logger },
    ),
  };
}

export interface OrgConnectionFactoryDeps extends Omit<
  OrgConnectionDeps,
  'transport' | 'onIdentity'
> {
  /** The way out for these settings (proxy, CAs), as the API-key mode's connections use it. */
  transport: (settings: Settings) => Transport;
  /** Holds the sign-in of each relay and tenant (one credential source per keychain account). */
  account: OrganisationAccount;
}

/**
 * The app's connection factory: organisation mode's connection for settings in that mode (the
 * relay alone, with the organisation's credential), `apiKeyMode`'s otherwise.
 */
export function withOrganisationMode(
  apiKeyMode: ConnectionFactory,
  deps: OrgConnectionFactoryDeps,
): ConnectionFactory {
  return (config) => {
    const { settings } = config;
    if (settings.connectionMode !== 'organisation') return apiKeyMode(config);
    const { account, transport, ...rest } = deps;
    return organisationConnection(
      {
        relayUrl: settings.relayUrl,
        tenant: settings.relayTenant,
        settings,
        tokens: account.tokens(settings),
      },
      { ...rest, transport: transport(settings) },
    );
  };
}
