import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { RawData, WebSocket } from 'ws';
import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import type { SimStats } from './types.ts';
import type { AccessRecord, Credentials, KeyRecord } from './credentials.ts';
import { normalizeIp } from './credentials.ts';
import { ApiError, ERR, rejectUpgrade } from './errors.ts';
import type { SimDialect } from './phone-system.ts';
import { textFrame } from '../src-shared/stream/ws-frame.ts';
import { API_PATHS } from '../src-shared/api/service-api.ts';

/**
 * The subscribe WebSocket of docs/wire-protocol.md section 5: bearer handshake, topic_list, heartbeat, idle
 * close 4000, TOKEN EXPIRED + 4002, and fan-out of event frames to subscribed sockets of a tenant.
 */
export const SUBSCRIBE_PATH = API_PATHS.subscribe;
export const CLOSE_IDLE = 4000;
export const CLOSE_KEY_REVOKED = 4001;
export const CLOSE_TOKEN_EXPIRED = 4002;
/** Default for the unread bytes a socket may queue before it is dropped as a dead consumer. */
export const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

interface Client {
  ws: WebSocket;
  raw: Duplex;
  key: KeyRecord;
  access: AccessRecord;
  topics: Set<number>;
  stalled: boolean;
  /** performance.now() of the last frame the client sent. */
  lastRx: number;
  idleTimer: NodeJS.Timeout | undefined;
  expiryTimer: TimerHandle | undefined;
}

export interface HandshakeFault {
  status: number;
  retryAfterSec?: number;
}

export interface SubscribeHubOptions {
  clock: Clock;
  credentials: Credentials;
  stats: SimStats;
  /** Real milliseconds, not scaled by the clock. */
  idleTimeoutMs: number;
  /** Queued bytes above which a socket that stopped reading is terminated. */
  maxBufferedBytes: number;
  /** The next injected handshake failure, if any (failHttp with target 'handshake' or 'all'). */
  takeHandshakeFault: () => HandshakeFault | null;
  /** The phone system's words: the handshake's token, refusals, control frames, scopes. */
  dialect: SimDialect;
}

export class SubscribeHub {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    perMessageDeflate: false,
  });
  private readonly byTenant = new Map<string, Set<Client>>();
  private readonly all = new Set<Client>();
  private readonly opts: SubscribeHubOptions;

  constructor(opts: SubscribeHubOptions) {
    this.opts = opts;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const fault = this.opts.takeHandshakeFault();
    if (fault) {
      const headers: Record<string, string> = {};
      if (fault.retryAfterSec !== undefined) headers['Retry-After'] = String(fault.retryAfterSec);
      rejectUpgrade(socket, this.opts.dialect.handshakeError(fault.status * 100), headers);
      return;
    }
    let access: AccessRecord;
    try {
      access = this.opts.credentials.authenticate(
        this.opts.dialect.token(req),
        normalizeIp(req.socket.remoteAddress),
      );
    } catch (err) {
      const code = err instanceof ApiError ? err.errcode : ERR.TOKEN_EXPIRED;
      if (code === ERR.TOKEN_EXPIRED) this.opts.stats.tokenExpiredRejections++;
      rejectUpgrade(socket, this.opts.dialect.handshakeError(code));
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, socket, access));
  }

  private accept(ws: WebSocket, raw: Duplex, access: AccessRecord): void {
    const client: Client = {
      ws,
      raw,
      key: access.key,
      access,
      topics: new Set(),
      stalled: false,
      lastRx: performance.now(),
      idleTimer: undefined,
      expiryTimer: undefined,
    };
    this.opts.stats.wsConnections++;
    this.opts.stats.wsOpen++;
    this.all.add(client);
    let set = this.byTenant.get(client.key.tenant);
    if (!set) this.byTenant.set(client.key.tenant, (set = new Set()));
    set.add(client);

    ws.on('message', (data, isBinary) => this.onMessage(client, data, isBinary));
    ws.on('ping', () => (client.lastRx = performance.now()));
    ws.on('error', () => ws.terminate());
    ws.on('close', () => this.forget(client));
    this.armIdle(client, this.opts.idleTimeoutMs);
    this.armExpiry(client);
  }

  private forget(client: Client): void {
    if (!this.all.delete(client)) return;
    this.opts.stats.wsOpen--;
    this.byTenant.get(client.key.tenant)?.delete(client);
    clearTimeout(client.idleTimer);
    this.opts.clock.clearTimeout(client.expiryTimer);
  }

  private onMessage(client: Client, data: RawData, isBinary: boolean): void {
    client.lastRx = performance.now();
    if (client.stalled || isBinary) return;
    const text = data.toString();
    if (text === 'heartbeat') {
      client.ws.send('heartbeat response');
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const list = (parsed as { topic_list?: unknown } | undefined)?.topic_list;
    const { dialect } = this.opts;
    if (!Array.isArray(list) || !list.every((c) => Number.isInteger(c) && c > 0)) {
      client.ws.send(dialect.frame(ERR.BAD_REQUEST, 'EXPECTED {"topic_list":[<event codes>]}'));
      return;
    }
    const allowed = new Set<number>();
    const denied: number[] = [];
    for (const code of list as number[]) {
      if (!dialect.eventScopes || this.opts.credentials.hasScope(client.key, `event:${code}`))
        allowed.add(code);
      else denied.push(code);
    }
    // A later topic_list replaces the earlier one; codes lacking scope are never delivered.
    client.topics = allowed;
    client.ws.send(
      denied.length === 0
        ? dialect.frame(ERR.OK)
        : dialect.frame(ERR.INSUFFICIENT_SCOPE, `INSUFFICIENT SCOPE FOR ${denied.join(',')}`),
    );
  }

  /** One timer per socket, re-armed lazily: a busy socket costs a timestamp write per frame, no timer churn. */
  private armIdle(client: Client, ms: number): void {
    client.idleTimer = setTimeout(
      () => {
        if (client.stalled) return;
        const silent = performance.now() - client.lastRx;
        if (silent >= this.opts.idleTimeoutMs) client.ws.close(CLOSE_IDLE, 'IDLE TIMEOUT');
        else this.armIdle(client, this.opts.idleTimeoutMs - silent);
      },
      Math.max(1, ms),
    );
    // Per-socket bookkeeping: the listening server is what holds the process, not this timer.
    client.idleTimer.unref();
  }

  private armExpiry(client: Client): void {
    const { clock, credentials } = this.opts;
    this.opts.clock.clearTimeout(client.expiryTimer);
    client.expiryTimer = clock.setTimeout(() => {
      client.expiryTimer = undefined;
      if (client.stalled) return;
      if (credentials.isExpired(client.access)) this.expireClient(client);
      else this.armExpiry(client);
    }, client.access.expiresAt - clock.now());
  }

  private expireClient(client: Client): void {
    if (client.stalled || client.ws.readyState !== client.ws.OPEN) return;
    client.ws.send(this.opts.dialect.frame(ERR.TOKEN_EXPIRED));
    client.ws.close(CLOSE_TOKEN_EXPIRED, 'TOKEN EXPIRED');
  }

  /**
   * Hot path: the payload is encoded once by the caller, framed here once, and the same bytes are
   * written to every subscribed socket. Writing the frame to the TCP socket directly is safe
   * because, without permessage-deflate, ws's own sender writes synchronously and keeps no queue,
   * so frames stay in order.
   */
  broadcast(tenant: string, code: number | null, payload: Buffer): number {
    const set = this.byTenant.get(tenant);
    if (!set) return 0;
    let wire: Buffer | undefined;
    let n = 0;
    for (const client of set) {
      if (client.stalled || client.ws.readyState !== 1) continue;
      if (code === null ? client.topics.size === 0 : !client.topics.has(code)) continue;
      // A client that stopped reading is dropped before it costs the simulator unbounded memory.
      if (client.raw.writableLength > this.opts.maxBufferedBytes) {
        client.ws.terminate();
        continue;
      }
      wire ??= textFrame(payload);
      client.raw.write(wire);
      n++;
    }
    return n;
  }

  /** Tokens ended before their time (del_token, a sign-in that ends the earlier ones). */
  expireEnded(): void {
    for (const client of this.all)
      if (this.opts.credentials.isExpired(client.access)) this.expireClient(client);
  }

  /** After expireAllTokens: every open socket's token is now expired. */
  expireAll(): void {
    for (const client of this.all) this.expireClient(client);
  }

  closeKey(key: string): void {
    for (const client of this.all) {
      if (client.key.key !== key || client.stalled || client.ws.readyState !== client.ws.OPEN)
        continue;
      client.ws.send(this.opts.dialect.frame(ERR.INVALID_KEY));
      client.ws.close(CLOSE_KEY_REVOKED, 'KEY REVOKED');
    }
  }

  closeAll(code: number): void {
    for (const client of this.all) if (!client.stalled) client.ws.close(code, 'SERVER GOING AWAY');
  }

  /** Half-open: the TCP connection stays, but nothing is read or written on it any more. */
  stallAll(): void {
    for (const client of this.all) {
      client.stalled = true;
      client.raw.pause();
      clearTimeout(client.idleTimer);
      this.opts.clock.clearTimeout(client.expiryTimer);
    }
  }

  shutdown(): void {
    for (const client of this.all) {
      client.ws.terminate();
      this.forget(client);
    }
    this.wss.close();
  }
}
