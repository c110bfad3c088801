import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { Clock } from '../src-main/core/clock.ts';
import type { Logger } from '../src-main/core/log.ts';
import type { TokenValidator } from './auth.ts';
import { ClientSession } from './client-session.ts';
import type { RelayConfig } from './config.ts';
import { refuseUpgrade } from './http-reply.ts';
import type { RelayMetrics } from './metrics.ts';
import type { SessionRegistry } from './sessions.ts';
import type { EventStore } from './store/types.ts';
import { pathOf, tenantInPath } from './tenants.ts';

export interface UpgradeDeps {
  config: RelayConfig;
  store: EventStore;
  metrics: RelayMetrics;
  logger: Logger;
  clock: Clock;
  validator: TokenValidator;
  sessions: SessionRegistry;
  wss: WebSocketServer;
  draining: () => boolean;
}

/**
 * `GET /v1/stream/<tenant>` upgrades: the tenant must be configured and the bearer token valid at
 * that tenant's service (auth.ts) before the socket is upgraded; a refusal is a plain HTTP answer.
 * An admitted socket becomes a ClientSession in the tenant's fan-out until it closes.
 */
export function upgradeHandler(
  deps: UpgradeDeps,
): (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  const { config, store, metrics, logger, clock, validator, sessions, wss } = deps;
  const clientLogger = logger.child({ component: 'client' });

  async function onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    if (deps.draining())
      return refuseUpgrade(socket, 503, { errcode: 0, errmsg: 'relay shutting down' });
    const tenant = tenantInPath(config.tenants, pathOf(req.url), '/v1/stream/');
    if (!tenant || tenant === 'no-match')
      return refuseUpgrade(socket, 404, { errcode: 0, errmsg: 'unknown tenant' });
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    if (!token)
      return refuseUpgrade(socket, 401, { errcode: 10002, errmsg: 'bearer token required' });
    const verdict = await validator.validate(tenant.name, tenant.config.baseUrl, token);
    if (!verdict.ok) {
      logger.info('client refused', {
        tenant: tenant.name,
        status: verdict.status,
        errcode: verdict.errcode,
      });
      return refuseUpgrade(socket, verdict.status, {
        errcode: verdict.errcode,
        errmsg: verdict.reason,
      });
    }
    if (deps.draining())
      return refuseUpgrade(socket, 503, { errcode: 0, errmsg: 'relay shutting down' });
    wss.handleUpgrade(req, socket, head, (ws) => {
      const fanout = sessions.fanout(tenant.name);
      const session = new ClientSession(ws, tenant.name, randomUUID(), {
        store,
        metrics,
        logger: clientLogger,
        options: config.clients,
        now: () => clock.now(),
        monotonic: () => clock.monotonic(),
        onLive: (s, keys) => fanout.index(s, keys),
        tenantPosition: () => fanout.lastCursor,
      });
      fanout.add(session);
      logger.info('client connected', { tenant: tenant.name, session: session.id });
      ws.on('close', (code: number) => {
        if (!session.isClosed) metrics.clientClosed(code);
        session.markClosed();
        fanout.remove(session);
        logger.info('client disconnected', { tenant: tenant.name, session: session.id, code });
      });
      ws.on('error', () => {});
    });
  }

  return (req, socket, head) => {
    onUpgrade(req, socket, head).catch((err: Error) => {
      logger.error('upgrade failed', { err: err.message });
      refuseUpgrade(socket, 500, { errcode: 0, errmsg: 'internal error' });
    });
  };
}
