import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { RelayCallApi } from './calls/call-route.ts';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Clock } from '../src-shared/process/clock.ts';
import { systemClock } from '../src-shared/process/clock.ts';
import type { Logger } from '../src-shared/process/log.ts';
import { silentLogger } from '../src-shared/process/log.ts';
import { CloseCode, relayClientPath } from '../src-shared/relay/relay-protocol.ts';
import { Admission } from './admission.ts';
import { TokenValidator } from './auth.ts';
import type { RelayConfig } from './config.ts';
import { InFlight } from './in-flight.ts';
import { RelayMetrics } from './metrics.ts';
import { requestHandler } from './routes.ts';
import { SendBudget } from './send-budget.ts';
import { SessionRegistry } from './sessions.ts';
import type { EventStore } from './store/types.ts';
import { listenStartupError } from './startup-errors.ts';
import { startSweeper } from './sweeper.ts';
import { upgradeHandler } from './upgrade.ts';
import type { UserStore } from './users/types.ts';
import { UserAuthenticator } from './users/user-auth.ts';
import { OidcVerifier, type EmailDirectory } from './users/oidc.ts';
import { SecretRegistry } from '../src-shared/process/log.ts';
import type { CreateSocket } from '../src-shared/stream/socket.ts';
import { directTransport } from './outbound.ts';
import type { GatewayCredential } from './gateway/credential.ts';
import { GatewayDirectory } from './gateway/directory.ts';
import type { GatewayUpstream } from './gateway/upstream.ts';
import type { LeasedUpstream } from './gateway/leased-upstream.ts';
import { emailKey } from '../src-shared/rules/email-address.ts';

/**
 * Largest frame a client may send. The biggest hello the protocol allows (three lists of 200
 * entries, 40 characters each for extensions and DIDs) is about 19 KB; anything beyond this is
 * not a hello and closes the socket (1009).
 */
const MAX_CLIENT_FRAME_BYTES = 32 * 1024;

export interface RelayDeps {
  config: RelayConfig;
  store: EventStore;
  clock?: Clock;
  /**
   * The way out for every request the relay makes (token checks, a gateway's API calls, OpenID
   * Connect): the transport's fetch (outbound.ts; cli.ts passes the one it builds from the
   * environment). Without it, and without createSocket: the same transport going direct.
   */
  fetch?: typeof fetch;
  logger?: Logger;
  /** The relay's users (users/open-user-store.ts), when a tenant has `access: "users"`. */
  users?: UserStore | null;
  /** The key enrolment codes are stored under (users/code-key.ts); absent: plain SHA-256. */
  codeKey?: string | null;
  /** Extensions by e-mail address; by default, in gateway mode, the phone system's extension list. */
  directory?: EmailDirectory;
  /** Gateway mode: the credential of each tenant with `gateway` (gateway/credential.ts). */
  gateway?: ReadonlyMap<string, GatewayCredential>;
  /** Where secrets and tokens are registered for scrubbing (the logger's registry). */
  secrets?: SecretRegistry;
  /** The upstream streams' sockets: the transport's createSocket (see fetch). */
  createSocket?: CreateSocket;
  /** The upstream streams' timings (tests shorten them). */
  upstreamTuning?: { backoff?: { baseMs?: number; capMs?: number }; heartbeatMs?: number };
  /** Organisation mode's call requests: each tenant's PBX call API (calls/call-route.ts). */
  callApi?: (tenant: string) => RelayCallApi | undefined;
  /** Per-user limit of call requests (default 5 at once, 20 a minute). */
  callRate?: { burst: number; perMinute: number };
}

export interface RelayServer {
  /** http(s)://host:port */
  readonly url: string;
  readonly port: number;
  readonly metrics: RelayMetrics;
  webhookUrl(tenant: string): string;
  clientUrl(tenant: string): string;
  clientCount(): number;
  /** Graceful: stop accepting, finish in-flight webhooks, close clients with 1012. Leaves the store open. */
  close(): Promise<void>;
}

/**
 * Builds the relay's HTTP(S) server: webhooks in (routes.ts), client WebSockets out (upgrade.ts),
 * health and metrics; sessions swept by sweeper.ts; a graceful drain on close().
 */
export async function startRelay(deps: RelayDeps): Promise<RelayServer> {
  const { config, store } = deps;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const metrics = new RelayMetrics();
  const sessions = new SessionRegistry();
  const inFlight = new InFlight();
  let draining = false;
  const isDraining = () => draining;
  const budget = new SendBudget(
    config.clients.sendBudgetBytes,
    () => sessions.all(),
    () => clock.monotonic(),
  );
  // Every connection out goes through the one transport (outbound.ts): the caller's, or one going
  // direct, made only when the caller gave none.
  const secrets = deps.secrets ?? new SecretRegistry();
  const direct = deps.fetch && deps.createSocket ? undefined : directTransport({ logger, secrets });
  const fetch = deps.fetch ?? direct!.fetch;
  const createSocket = deps.createSocket ?? direct!.createSocket;
  const validator = new TokenValidator({
    fetch,
    clock,
    logger: logger.child({ component: 'auth' }),
    ...config.auth,
  });
  metrics.connectedClients = () => sessions.count();
  metrics.storageHealth = () => store.storageHealth?.();
  metrics.unsentBytes = () => budget.unsent;
  metrics.authQueued = () => validator.queueLength;
  const unsubscribe = store.subscribe((events) => {
    // What each step of the live path costs (metrics.ts): the store's hand-over, then the fan-out.
    let oldest = Infinity;
    for (const e of events) if (e.receivedAt < oldest) oldest = e.receivedAt;
    if (oldest !== Infinity) metrics.observeHandover(clock.now() - oldest);
    const started = clock.monotonic();
    sessions.publish(events);
    metrics.observeFanout(clock.monotonic() - started);
  });
  const users = deps.users ?? null;
  // Gateway mode: the relay's own stream per tenant, started (its first token a startup check)
  // before the relay listens.
  const upstreams = new Map<string, GatewayUpstream | LeasedUpstream>();
  // Loaded only for a gateway: the service client brings the shared words (i18n), which a relay
  // without one need not parse at every start.
  const gatewayCode = deps.gateway?.size
    ? {
        ...(await import('./gateway/upstream.ts')),
        ...(await import('./gateway/leased-upstream.ts')),
        ...(await import('./gateway/lease.ts')),
        ...(await import('./gateway/gateway-calls.ts')),
        ...(await import('./gateway/call-handoff.ts')),
      }
    : undefined;
  // With the Redis store, instances share a tenant: one of them keeps its stream (a lease).
  const owner = gatewayCode?.leaseOwnerId();
  for (const [name, credential] of deps.gateway ?? []) {
    if (!gatewayCode) break;
    const tenant = config.tenants[name];
    if (!tenant?.gateway) continue;
    const upstreamDeps = {
      tenant: name,
      config: tenant,
      credential,
      clock,
      logger: logger.child({ component: 'upstream', tenant: name }),
      metrics,
      fetch,
      createSocket,
      secrets,
      ...deps.upstreamTuning,
    };
    upstreams.set(
      name,
      tenant.gateway.stream && gatewayCode.isLeaseStore(store)
        ? new gatewayCode.LeasedUpstream({
            ...upstreamDeps,
            store,
            owner: owner!,
            ...(config.storage.kind === 'redis' && {
              lease: gatewayCode.leaseTimings(config.storage.upstreamLeaseMs),
            }),
          })
        : new gatewayCode.GatewayUpstream({ ...upstreamDeps, store }),
    );
  }
  const gatewayCalls = new Map<string, RelayCallApi>();
  // Several instances on Redis: a standby serves call requests through the lease holder
  // (gateway/call-handoff.ts), the holder takes them from the tenant's request list.
  const handoffs: { stop(): void }[] = [];
  for (const [name, upstream] of upstreams) {
    const api = gatewayCode!.gatewayCallApi(upstream);
    if (!api) continue;
    if (
      upstream instanceof gatewayCode!.LeasedUpstream &&
      gatewayCode!.isCallHandoffBackend(store)
    ) {
      const handoff = new gatewayCode!.CallHandoff({
        tenant: name,
        backend: store,
        local: api,
        term: () => upstream.term(),
        extensionsOf: async (user) => (await users?.findUser(name, user))?.extensions ?? null,
        clock,
        logger: logger.child({ component: 'call-handoff', tenant: name }),
      });
      handoff.start();
      handoffs.push(handoff);
      gatewayCalls.set(name, handoff.api());
    } else gatewayCalls.set(name, api);
  }
  const stopUpstreams = () => {
    for (const h of handoffs) h.stop();
    return Promise.all([...upstreams.values()].map((u) => u.stop()));
  };
  try {
    for (const [name, upstream] of upstreams)
      await upstream.start(config.tenants[name]!.gateway!.stream);
  } catch (err) {
    unsubscribe();
    await stopUpstreams();
    throw err;
  }
  metrics.upstreamStates = () =>
    new Map([...upstreams].map(([name, u]) => [name, u.state().state]));
  const directory =
    deps.directory ?? (upstreams.size > 0 ? new GatewayDirectory(upstreams, clock) : undefined);
  const oidc = new Map<string, OidcVerifier>();
  for (const [name, tenant] of Object.entries(config.tenants)) {
    // Handed to desktops (a value the provider says is not secret), but never logged.
    if (tenant.oidc?.clientSecret) secrets.add(tenant.oidc.clientSecret);
    if (tenant.oidc && tenant.access === 'users')
      oidc.set(
        name,
        new OidcVerifier({
          tenant: name,
          config: tenant.oidc,
          users,
          clock,
          logger: logger.child({ component: 'oidc', tenant: name }),
          fetch,
          maxTokenAgeMs: config.clients.authMaxAgeMs,
          ...(directory ? { directory } : {}),
        }),
      );
  }
  const userAuth = users
    ? new UserAuthenticator({
        users,
        logger: logger.child({ component: 'users' }),
        oidc: (tenant) => oidc.get(tenant),
      })
    : undefined;
  const unfollowUsers = users?.onChange((change) => {
    if (userAuth) void endChangedSessions(change.tenant, change.user, userAuth);
  });

  /**
   * After a change to a user (revoked, extensions changed), their open sessions are checked again:
   * those named by the user, and single sign-on sessions named by the user's e-mail address (the
   * config's mapping and the phone system's list name a session by the address).
   */
  async function endChangedSessions(
    tenant: string,
    user: string,
    auth: UserAuthenticator,
  ): Promise<void> {
    const names = new Set([user]);
    try {
      const email = (await users?.findUser(tenant, user))?.email;
      if (email) names.add(emailKey(email));
    } catch (err) {
      logger.warn('user not re-checked', { tenant, error: err });
    }
    const affected = new Set([...names].flatMap((name) => [...sessions.ofUser(tenant, name)]));
    for (const session of affected) {
      let verdict;
      try {
        verdict = await auth.recheck(tenant, session.identity!, session.credentialHash);
      } catch (err) {
        logger.warn('user not re-checked', { tenant, error: err });
        continue;
      }
      if (verdict === 'ok') continue;
      metrics.usersEnded += 1;
      logger.info('user session ended', { tenant, user, session: session.id, why: verdict });
      if (verdict === 'revoked') session.close(CloseCode.revoked, 'access revoked');
      else session.close(CloseCode.reauthenticate, 'your extensions changed; reconnect');
    }
  }

  const onRequest = requestHandler({
    config,
    store,
    metrics,
    logger,
    inFlight,
    draining: isDraining,
    clock,
    org: {
      users,
      oidcInfo: (tenant) => oidc.get(tenant)?.info() ?? null,
      codeKey: deps.codeKey ?? null,
      ...(userAuth ? { auth: userAuth } : {}),
    },
    calls: {
      auth: userAuth,
      // Gateway tenants' call API over their upstream's client and tokens (gateway-calls.ts).
      api: deps.callApi ?? ((tenant) => gatewayCalls.get(tenant)),
      ...(deps.callRate ? { rate: deps.callRate } : {}),
    },
    upstreams: () =>
      Object.fromEntries(
        [...upstreams].map(([name, u]) => {
          const { state, since } = u.state();
          return [name, { state, since: new Date(since).toISOString() }];
        }),
      ),
  });
  // Node checks header and request time-outs only every connectionsCheckingInterval (30 s by
  // default), so a 10 s limit held for up to 40 s; a check every second keeps them near their value.
  const serverOptions: http.ServerOptions = {
    headersTimeout: config.http.headersTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, config.http.headersTimeoutMs / 2),
  };
  const server = config.tls
    ? https.createServer(
        {
          ...serverOptions,
          cert: readFileSync(config.tls.certFile),
          key: readFileSync(config.tls.keyFile),
        },
        onRequest,
      )
    : http.createServer(serverOptions, onRequest);

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES });
  server.on(
    'upgrade',
    upgradeHandler({
      config,
      store,
      metrics,
      logger,
      clock,
      sessions,
      wss,
      draining: isDraining,
      validator,
      admission: new Admission(config.clients),
      budget,
      ...(userAuth ? { userAuth } : {}),
    }),
  );
  const sweeper = startSweeper(clock, sessions, config.clients);

  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => {
      sweeper.stop();
      unsubscribe();
      unfollowUsers?.();
      void stopUpstreams();
      reject(listenStartupError(config.host, config.port, err));
    };
    server.once('error', failed);
    server.listen(config.port, config.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const scheme = config.tls ? 'https' : 'http';
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${scheme}://${host}:${port}`;
  logger.info('relay listening', {
    url,
    storage: store.kind,
    tenants: Object.keys(config.tenants).length,
  });

  return {
    url,
    port,
    metrics,
    webhookUrl: (tenant) => `${url}/webhook/${encodeURIComponent(tenant)}`,
    clientUrl: (tenant) => url.replace(/^http/, 'ws') + relayClientPath(tenant),
    clientCount: () => sessions.count(),
    async close() {
      if (draining) return;
      draining = true;
      logger.info('relay draining', { inFlight: inFlight.size });
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await inFlight.settled(config.shutdownGraceMs);
      // What was stored just now is still on its way to the clients connected here.
      await store.published(1_000);
      sweeper.stop();
      unsubscribe();
      unfollowUsers?.();
      await stopUpstreams();
      for (const s of sessions.all())
        s.close(CloseCode.serviceRestart, 'relay restarting; reconnect and resume');
      wss.close();
      // Give close frames a moment to leave, then cut what remains. (This timer, like the wait
      // for webhooks in flight, holds the process: a drain that was asked for must finish.)
      await new Promise<void>((r) => setTimeout(r, 50));
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await closed;
      logger.info('relay closed');
    },
  };
}
