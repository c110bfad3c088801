import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { Clock } from '../src-shared/process/clock.ts';
import type { Logger } from '../src-shared/process/log.ts';
import { ERRCODE } from '../src-shared/api/errcodes.ts';
import { clientAddress, type Admission } from './admission.ts';
import { tokenKey, type TokenValidator } from './auth.ts';
import { ClientSession } from './client-session.ts';
import { ReplayPages } from './replay-pages.ts';
import type { RelayConfig } from './config.ts';
import { refuseUpgrade } from './http-reply.ts';
import { SampledLog } from './log-sampler.ts';
import type { HandshakeRefusal, RelayMetrics } from './metrics.ts';
import type { SendBudget } from './send-budget.ts';
import type { SessionRegistry } from './sessions.ts';
import type { EventStore } from './store/types.ts';
import { pathOf, tenantInPath } from './tenants.ts';
import type { RelayIdentity } from '../src-shared/relay/relay-protocol.ts';
import { RefusalBudget } from './refusal-budget.ts';
import type { UserAuthenticator } from './users/user-auth.ts';

export interface UpgradeDeps {
  config: RelayConfig;
  store: EventStore;
  metrics: RelayMetrics;
  logger: Logger;
  clock: Clock;
  validator: TokenValidator;
  admission: Admission;
  budget: SendBudget;
  sessions: SessionRegistry;
  wss: WebSocketServer;
  draining: () => boolean;
  /** Organisation mode (tenants with `access: "users"`): the relay's users. */
  userAuth?: UserAuthenticator;
}

/** What admitted a client: a service token (any filter), or one of the relay's users (theirs). */
type Admitted =
  | { ok: true; identity?: RelayIdentity; credentialHash?: string }
  | {
      ok: false;
      reason: HandshakeRefusal;
      status: number;
      errcode: number;
      errmsg: string;
    };

/**
 * `GET /v1/stream/<tenant>` upgrades: the tenant must be configured, the client within its session
 * limits (admission.ts: in all, per address, per token) and its bearer token valid at that
 * tenant's service (auth.ts) before the socket is upgraded; a refusal is a plain HTTP answer,
 * counted in relay_handshakes_refused_total and logged at most 10 times per 10 s. An admitted
 * socket becomes a ClientSession in the tenant's fan-out until it closes.
 */
export function upgradeHandler(
  deps: UpgradeDeps,
): (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  const { config, store, metrics, logger, clock, validator, admission, budget, sessions, wss } =
    deps;
  const clientLogger = logger.child({ component: 'client' });
  const replayPages = new ReplayPages(store);
  const refusedLog = new SampledLog(logger, 'info', 'client refused', clock);
  // Organisation mode: refused credentials per client address, as the token check counts them.
  const userRefusals = new RefusalBudget(config.auth.maxFailuresPerAddressPerMinute, () =>
    clock.monotonic(),
  );

  /** The service's word on a token (service-token tenants), or the relay's on a user. */
  async function admit(
    tenant: { name: string; config: RelayConfig['tenants'][string] },
    token: string,
    address: string,
    hash: string,
  ): Promise<Admitted> {
    if (tenant.config.access === 'users') {
      if (!deps.userAuth || !userRefusals.allows(address))
        return {
          ok: false,
          reason: 'rate-limited',
          status: 429,
          errcode: ERRCODE.rateLimited,
          errmsg: 'too many refused sign-ins from this address; retry later',
        };
      const verdict = await deps.userAuth.authenticate(tenant.name, token);
      if (verdict.ok)
        return { ok: true, identity: verdict.identity, credentialHash: verdict.credentialHash };
      if (verdict.status !== 503) userRefusals.spend(address);
      return {
        ok: false,
        reason:
          verdict.status === 403
            ? 'not-mapped'
            : verdict.status === 503
              ? 'service-unavailable'
              : 'sign-in-refused',
        status: verdict.status,
        errcode: verdict.errcode,
        errmsg: verdict.reason,
      };
    }
    const verdict = await validator.validate(
      tenant.name,
      tenant.config.baseUrl,
      token,
      address,
      hash,
      tenant.config.phoneSystem,
    );
    if (verdict.ok) return { ok: true };
    return {
      ok: false,
      reason:
        verdict.status === 401
          ? 'token-rejected'
          : verdict.status === 403
            ? 'token-forbidden'
            : verdict.status === 429
              ? 'rate-limited'
              : 'service-unavailable',
      status: verdict.status,
      errcode: verdict.errcode,
      errmsg: verdict.reason,
    };
  }

  const refuse = (
    socket: Duplex,
    reason: HandshakeRefusal,
    status: number,
    body: { errcode: number; errmsg: string },
    fields: Record<string, unknown> = {},
  ) => {
    metrics.refuseHandshake(reason);
    if (reason !== 'draining') refusedLog.write({ ...fields, status, reason });
    refuseUpgrade(socket, status, body);
  };

  async function onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    if (deps.draining())
      return refuse(socket, 'draining', 503, { errcode: 0, errmsg: 'relay shutting down' });
    const tenant = tenantInPath(config.tenants, pathOf(req.url), '/v1/stream/');
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    if (!tenant || tenant === 'no-match')
      // Answered as a tenant answers a missing or rejected token, not 404, so that the stream
      // does not tell which tenants exist (issue 33 item 5). The log and the metric still say
      // unknown-tenant for the administrator. (GET /v1/org/<tenant> names users tenants on
      // purpose: a desktop reads it before anyone signs in.)
      return refuse(
        socket,
        'unknown-tenant',
        401,
        token
          ? { errcode: ERRCODE.tokenExpired, errmsg: 'token rejected by the service' }
          : { errcode: ERRCODE.tokenExpired, errmsg: 'bearer token required' },
      );
    if (!token)
      return refuse(socket, 'no-token', 401, {
        errcode: ERRCODE.tokenExpired,
        errmsg: 'bearer token required',
      });
    const address = clientAddress(req, config.trustProxy);
    const hash = tokenKey(token);
    const place = admission.take(address, `${tenant.name}:${hash}`);
    if (!place.ok)
      return refuse(
        socket,
        'too-many-sessions',
        place.status,
        { errcode: place.status === 429 ? ERRCODE.rateLimited : ERRCODE.ok, errmsg: place.reason },
        { tenant: tenant.name },
      );
    socket.once('close', () => place.release());
    let admitted = false;
    try {
      const verdict = await admit(tenant, token, address, hash);
      if (!verdict.ok)
        return refuse(
          socket,
          verdict.reason,
          verdict.status,
          { errcode: verdict.errcode, errmsg: verdict.errmsg },
          { tenant: tenant.name, errcode: verdict.errcode },
        );
      if (deps.draining())
        return refuse(socket, 'draining', 503, { errcode: 0, errmsg: 'relay shutting down' });
      if (socket.destroyed) return;
      admitted = true;
      wss.handleUpgrade(req, socket, head, (ws) => {
        const fanout = sessions.fanout(tenant.name);
        const session = new ClientSession(ws, tenant.name, randomUUID(), {
          store,
          metrics,
          budget,
          frames: sessions.frames,
          replayPages,
          logger: clientLogger,
          options: config.clients,
          now: () => clock.now(),
          monotonic: () => clock.monotonic(),
          onLive: (s, keys) => fanout.index(s, keys),
          tenantPosition: () => fanout.lastCursor,
          ...(verdict.identity
            ? {
                identity: verdict.identity,
                credentialHash: verdict.credentialHash,
                authDeadline: authDeadline(verdict.identity),
              }
            : {}),
        });
        fanout.add(session);
        logger.info('client connected', {
          tenant: tenant.name,
          session: session.id,
          ...(session.identity ? { user: session.identity.user, via: session.identity.via } : {}),
        });
        ws.on('close', (code: number) => {
          if (!session.isClosed) metrics.clientClosed(code);
          session.markClosed();
          fanout.remove(session);
          place.release();
          logger.info('client disconnected', { tenant: tenant.name, session: session.id, code });
        });
        ws.on('error', () => {});
      });
    } finally {
      // A refused handshake, or a socket that went away before it could be upgraded.
      if (!admitted) place.release();
    }
  }

  /**
   * An OpenID sign-in ends at its identity's `expiresAt`: the maximum age after its token was
   * issued (users/oidc.ts, sessionEnd(); a renewed one reconnects), not at the token's own expiry.
   */
  function authDeadline(identity: RelayIdentity): number {
    const left =
      identity.expiresAt === null
        ? config.clients.authMaxAgeMs
        : Math.min(config.clients.authMaxAgeMs, Math.max(0, identity.expiresAt - clock.now()));
    return clock.monotonic() + left;
  }

  return (req, socket, head) => {
    onUpgrade(req, socket, head).catch((err: Error) => {
      logger.error('upgrade failed', { error: err });
      refuseUpgrade(socket, 500, { errcode: 0, errmsg: 'internal error' });
    });
  };
}
