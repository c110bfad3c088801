import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Clock, TimerHandle } from '../src-main/core/clock.ts';
import { systemClock } from '../src-main/core/clock.ts';
import type { Logger } from '../src-main/core/log.ts';
import { silentLogger } from '../src-main/core/log.ts';
import {
  CloseCode,
  TENANT_PATTERN,
  relayClientPath,
} from '../src-main/core/relay-client/protocol.ts';
import { TokenValidator } from './auth.ts';
import { ClientSession } from './client-session.ts';
import { TenantFanout } from './fanout.ts';
import type { RelayConfig } from './config.ts';
import { RelayMetrics } from './metrics.ts';
import type { EventStore } from './store/types.ts';
import { handleWebhook, reply } from './webhook-handler.ts';

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
  fetch?: typeof fetch;
  logger?: Logger;
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

/** Builds the relay's HTTP(S) server: webhooks in, client WebSockets out, health and metrics. */
export async function startRelay(deps: RelayDeps): Promise<RelayServer> {
  const { config, store } = deps;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const metrics = new RelayMetrics();
  const validator = new TokenValidator({
    fetch: deps.fetch ?? fetch,
    clock,
    logger: logger.child({ component: 'auth' }),
    ...config.auth,
  });
  const sessions = new Map<string, TenantFanout<ClientSession>>();
  let draining = false;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  const now = () => clock.now();
  const webhookLogger = logger.child({ component: 'webhook' });
  const clientLogger = logger.child({ component: 'client' });
  metrics.connectedClients = () => {
    let n = 0;
    for (const fanout of sessions.values()) n += fanout.size;
    return n;
  };

  const unsubscribe = store.subscribe((event) => {
    sessions.get(event.tenant)?.publish(event);
  });

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (draining) {
      res.setHeader('Connection', 'close');
      res.setHeader('Retry-After', '1');
      return reply(res, 503, { ok: false, error: 'relay shutting down' });
    }
    if (path === '/healthz') return reply(res, 200, { ok: true });
    if (path === '/readyz') {
      store.ping().then(
        () => reply(res, 200, { ok: true, storage: store.kind }),
        () => reply(res, 503, { ok: false, storage: store.kind, error: 'storage unreachable' }),
      );
      return;
    }
    if (path === '/metrics') {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(metrics.render());
      return;
    }
    const m = /^\/webhook\/([^/]+)$/.exec(path);
    if (m) {
      const tenant = safeDecode(m[1]!);
      const tenantConfig =
        tenant && TENANT_PATTERN.test(tenant) ? config.tenants[tenant] : undefined;
      if (req.method !== 'POST') return reply(res, 405, { ok: false, error: 'POST only' });
      if (!tenantConfig || !Object.hasOwn(config.tenants, tenant!)) {
        metrics.received += 1;
        metrics.reject('unknown-tenant');
        return reply(res, 404, { ok: false, error: 'unknown tenant' });
      }
      inFlight += 1;
      handleWebhook(req, res, tenant!, tenantConfig, {
        store,
        metrics,
        logger: webhookLogger,
        maxBodyBytes: config.maxBodyBytes,
        now,
      })
        .catch((err: Error) => {
          logger.error('webhook handler failed', { err: err.message });
          reply(res, 500, { ok: false, error: 'internal error' });
        })
        .finally(() => {
          inFlight -= 1;
          if (inFlight === 0) for (const w of idleWaiters.splice(0)) w();
        });
      return;
    }
    reply(res, 404, { ok: false, error: 'not found' });
  };

  const server = config.tls
    ? https.createServer(
        { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) },
        onRequest,
      )
    : http.createServer(onRequest);
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(req, socket, head).catch((err: Error) => {
      logger.error('upgrade failed', { err: err.message });
      refuse(socket, 500, { errcode: 0, errmsg: 'internal error' });
    });
  });

  async function onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    if (draining) return refuse(socket, 503, { errcode: 0, errmsg: 'relay shutting down' });
    const path = (req.url ?? '/').split('?')[0]!;
    const m = /^\/v1\/stream\/([^/]+)$/.exec(path);
    const tenant = m ? safeDecode(m[1]!) : null;
    const tenantConfig =
      tenant && TENANT_PATTERN.test(tenant) && Object.hasOwn(config.tenants, tenant)
        ? config.tenants[tenant]
        : undefined;
    if (!tenant || !tenantConfig)
      return refuse(socket, 404, { errcode: 0, errmsg: 'unknown tenant' });
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    if (!token) return refuse(socket, 401, { errcode: 10002, errmsg: 'bearer token required' });
    const verdict = await validator.validate(tenant, tenantConfig.baseUrl, token);
    if (!verdict.ok) {
      logger.info('client refused', { tenant, status: verdict.status, errcode: verdict.errcode });
      return refuse(socket, verdict.status, { errcode: verdict.errcode, errmsg: verdict.reason });
    }
    if (draining) return refuse(socket, 503, { errcode: 0, errmsg: 'relay shutting down' });
    wss.handleUpgrade(req, socket, head, (ws) => {
      let fanout = sessions.get(tenant);
      if (!fanout) sessions.set(tenant, (fanout = new TenantFanout()));
      const tenantFanout = fanout;
      const session = new ClientSession(ws, tenant, randomUUID(), {
        store,
        metrics,
        logger: clientLogger,
        options: config.clients,
        now,
        monotonic: () => clock.monotonic(),
        onLive: (s, keys) => tenantFanout.index(s, keys),
        tenantPosition: () => tenantFanout.lastCursor,
      });
      tenantFanout.add(session);
      logger.info('client connected', { tenant, session: session.id });
      ws.on('close', (code: number) => {
        if (!session.isClosed) metrics.clientClosed(code);
        session.markClosed();
        tenantFanout.remove(session);
        logger.info('client disconnected', { tenant, session: session.id, code });
      });
      ws.on('error', () => {});
    });
  }

  // Idle clients, sessions past their authorisation age, and clients that never said hello.
  let sweepTimer: TimerHandle | undefined;
  const sweep = () => {
    const t = clock.monotonic();
    for (const fanout of sessions.values())
      for (const s of fanout.sessions()) {
        if (t - s.lastHeard > config.clients.idleTimeoutMs) s.close(CloseCode.idle, 'no heartbeat');
        else if (t - s.openedAt > config.clients.authMaxAgeMs)
          s.close(CloseCode.reauthenticate, 'authorisation expired; reconnect with a fresh token');
        else s.checkHello(t, config.clients.helloTimeoutMs);
      }
    sweepTimer = clock.setTimeout(
      sweep,
      Math.max(250, Math.min(5_000, config.clients.idleTimeoutMs / 4)),
    );
  };
  sweep();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
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
    clientCount: () => metrics.connectedClients(),
    async close() {
      if (draining) return;
      draining = true;
      logger.info('relay draining', { inFlight });
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // These waits hold the process (no unref): the CLI exits only once the store is closed,
      // which is when the memory store writes its snapshot.
      if (inFlight > 0) {
        let grace: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((r) => idleWaiters.push(r)),
          new Promise<void>((r) => (grace = setTimeout(r, config.shutdownGraceMs))),
        ]);
        clearTimeout(grace);
      }
      clock.clearTimeout(sweepTimer);
      unsubscribe();
      for (const fanout of sessions.values())
        for (const s of fanout.sessions())
          s.close(CloseCode.serviceRestart, 'relay restarting; reconnect and resume');
      wss.close();
      // Give close frames a moment to leave, then cut what remains.
      await new Promise<void>((r) => setTimeout(r, 50));
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await closed;
      idleWaiters = [];
      logger.info('relay closed');
    },
  };
}

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Answers an upgrade request with a plain HTTP error (the handshake is refused, not upgraded). */
function refuse(socket: Duplex, status: number, body: { errcode: number; errmsg: string }): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
  (socket as Socket).destroySoon?.();
}
