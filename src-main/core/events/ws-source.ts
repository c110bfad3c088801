/**
 * The direct event stream: one WebSocket to the service (docs/wire-protocol.md section 5), kept
 * alive.
 *
 * - Handshake: `Authorization: Bearer` and `User-Agent` headers; the token never goes in the URL.
 * - Subscribe: `{"topic_list":[...]}` right after open; `errcode` 0 means subscribed, 10003 means
 *   subscribed without the codes the key lacks a scope for (status degraded, with the remedy).
 * - Liveness: every `heartbeatMs` (25 s) the text frame `heartbeat`; a socket from which nothing at
 *   all (no `heartbeat response`, no event) arrived for two intervals is dead, found by a check that
 *   runs every half interval: it is terminated and replaced. That is the only way to notice a
 *   half-open TCP connection after sleep or a Wi-Fi change.
 * - Sleep: each check compares how far the wall clock and the monotonic clock moved; when the wall
 *   clock moved `jumpThresholdMs` more, the machine slept, and the socket is replaced at once.
 * - Make-before-break: `rotateLeadMs` before the access token expires, and on wake(), a second socket
 *   is opened with a fresh token and subscribed, and only then is the old one closed. Events seen on
 *   both are removed downstream by event_id.
 * - Failures: 10002 (frame before close 4002, or a 401 handshake) invalidates the token and
 *   reconnects at once, once; 10001/10004 (or a 403 handshake) need the user: no more retries until
 *   wake('user'); anything else (1001, 1012, 4000, refused, 5xx) reconnects after a back-off with
 *   full jitter (see backoff.ts).
 *
 * Frames other than heartbeats and acks are handed on untouched, as text, to `onFrame` listeners.
 */
import { Backoff, STREAM_BACKOFF } from '../backoff.ts';
import type { Clock, TimerHandle } from '../../../src-shared/clock.ts';
import { Emitter } from '../../../src-shared/emitter.ts';
import { Generation } from '../generation.ts';
import { silentLogger, type Logger } from '../../../src-shared/log.ts';
import {
  describeErrcode,
  describeError,
  ERRCODE,
  hintPhrase,
  type ErrorDescription,
  type ServiceError,
} from '../../../src-shared/service-errors.ts';
import { networkFault } from '../net/net-errors.ts';
import type {
  AccessToken,
  ConnectionStatus,
  EventSource,
  StreamSourceDeps,
  TokenSource,
  WakeReason,
} from './contracts.ts';
import { CALL_STATE_CHANGED } from './envelope.ts';
import { HeartbeatWatch } from './heartbeat-watch.ts';
import {
  handshakeRejection,
  type CreateSocket,
  type HandshakeRejection,
  type SocketConnection,
} from '../net/socket.ts';
import { faultStatus, saidStatus, StatusHolder } from './status.ts';
import { phrase, type Phrase } from '../../../src-shared/i18n/phrase.ts';
import { API_PATHS, serviceUrl } from '../../../src-shared/service-api.ts';

export interface WebSocketSourceDeps extends StreamSourceDeps {
  baseUrl: string;
  /** Event codes to subscribe to, e.g. [30011]. */
  topics: number[];
  /** How long before the access token expires the replacement socket is opened; default 60 s. */
  rotateLeadMs?: number;
  /** A wall-clock jump beyond the monotonic clock larger than this means the machine slept. */
  jumpThresholdMs?: number;
}

const HEARTBEAT = 'heartbeat';
const HEARTBEAT_RESPONSE = 'heartbeat response';

/** ws:// or wss:// address of the subscribe endpoint for a tenant's http(s) base address. */
export function subscribeUrl(baseUrl: string): string {
  return serviceUrl(baseUrl, API_PATHS.subscribe, { ws: true }).toString();
}

type Role = 'primary' | 'candidate';

interface Connection {
  id: number;
  role: Role;
  token: AccessToken;
  socket?: SocketConnection;
  phase: 'connecting' | 'open' | 'subscribed' | 'closed';
  /** Liveness by what arrives; a new one when the socket opens. */
  watch: HeartbeatWatch;
  /** Closed on purpose (rotated out, stopping, replaced): its close must not trigger a reconnect. */
  retired: boolean;
  tokenExpired: boolean;
  foundDead: boolean;
  rejection?: HandshakeRejection;
  /** A proxy or certificate failure the socket met (net/net-errors.ts). */
  failure?: ServiceError;
  closedWaiters: Array<() => void>;
}

export class WebSocketEventSource implements EventSource {
  readonly name: string;
  private readonly url: string;
  private readonly tokens: TokenSource;
  private readonly topics: number[];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly createSocket: CreateSocket;
  private readonly heartbeatMs: number;
  private readonly stableMs: number;
  private readonly rotateLeadMs: number;
  private readonly jumpThresholdMs: number;
  private readonly userAgent: string;
  private readonly backoff: Backoff;

  private readonly frames: Emitter<[text: string, receivedAt: number]>;
  private readonly refusedChanges: Emitter<[codes: number[]]>;
  /** Codes the service refused (10003) on the last subscription. */
  private refused: number[] = [];
  private readonly current: StatusHolder;

  private running = false;
  /** Set by 10001/10004: no retries until wake('user'). */
  private attention = false;
  private primary: Connection | undefined;
  private candidate: Connection | undefined;
  private pendingPrimary = false;
  private pendingCandidate = false;
  /** Bumped by stop() so token fetches that finish afterwards are dropped. */
  private readonly generation = new Generation();
  private nextId = 1;
  /** The one immediate retry after a 10002 has been spent (reset by a subscribed connection). */
  private tokenRetryUsed = false;
  private reconnectTimer: TimerHandle | undefined;
  private rotationTimer: TimerHandle | undefined;
  private stableTimer: TimerHandle | undefined;
  private tickTimer: TimerHandle | undefined;
  private lastTick: { wall: number; mono: number } | undefined;

  constructor(deps: WebSocketSourceDeps) {
    this.name = deps.name ?? 'direct';
    this.url = subscribeUrl(deps.baseUrl);
    this.tokens = deps.tokens;
    this.topics = [...deps.topics];
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({
      component: 'ws-source',
      source: this.name,
    });
    this.createSocket = deps.createSocket;
    this.heartbeatMs = deps.heartbeatMs ?? 25_000;
    this.stableMs = deps.stableMs ?? 30_000;
    this.rotateLeadMs = deps.rotateLeadMs ?? 60_000;
    this.jumpThresholdMs = deps.jumpThresholdMs ?? 10_000;
    this.userAgent = deps.userAgent ?? 'Screenpop/0.1';
    this.backoff = new Backoff({ ...STREAM_BACKOFF, ...deps.backoff }, deps.random);
    this.frames = new Emitter(this.logger, 'frame');
    this.refusedChanges = new Emitter(this.logger, 'refused-topics');
    this.current = new StatusHolder(this.logger);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attention = false;
    this.setStatus(saidStatus('connecting', [phrase('status.connecting-service')]));
    this.lastTick = { wall: this.clock.now(), mono: this.clock.monotonic() };
    this.scheduleTick();
    void this.open('primary');
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.generation.bump();
    // A token fetch still on its way belongs to the old generation: a later start() must not wait for it.
    this.pendingPrimary = false;
    this.pendingCandidate = false;
    for (const timer of [this.reconnectTimer, this.rotationTimer, this.stableTimer, this.tickTimer])
      this.clock.clearTimeout(timer);
    const closing = [this.primary, this.candidate].filter(
      (c): c is Connection => !!c && c.phase !== 'closed',
    );
    this.primary = undefined;
    this.candidate = undefined;
    await Promise.all(closing.map((c) => this.retire(c, 1000, 'client stopping')));
    this.setStatus(saidStatus('offline', [phrase('status.stopped')]));
  }

  wake(reason: WakeReason): void {
    if (!this.running) return;
    this.logger.info('wake', { reason });
    if (reason === 'user') {
      this.attention = false;
      this.tokenRetryUsed = false;
      this.backoff.reset();
    }
    if (this.attention) return;
    this.replaceNow();
  }

  onFrame(listener: (text: string, receivedAt: number) => void): () => void {
    return this.frames.on(listener);
  }

  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    return this.current.on(listener);
  }

  status(): ConnectionStatus {
    return this.current.get();
  }

  /** For tests and diagnostics: how many sockets are open or opening. */
  openSockets(): number {
    return [this.primary, this.candidate].filter((c) => c && c.phase !== 'closed').length;
  }

  // ---- opening ----

  /** Fetches a token and opens a socket for `role`. */
  private async open(role: Role): Promise<void> {
    if (
      role === 'primary'
        ? this.pendingPrimary || this.primary
        : this.pendingCandidate || this.candidate
    )
      return;
    const current = this.generation.ticket();
    if (role === 'primary') this.pendingPrimary = true;
    else this.pendingCandidate = true;
    let token: AccessToken;
    try {
      token = await this.tokens.getToken();
    } catch (error) {
      if (!current()) return; // stop() came meanwhile and cleared the flags
      if (role === 'primary') this.pendingPrimary = false;
      else this.pendingCandidate = false;
      if (this.running) this.onTokenError(error, role);
      return;
    }
    if (!current()) return;
    if (role === 'primary') this.pendingPrimary = false;
    else this.pendingCandidate = false;
    if (!this.running || this.attention) return;
    if (role === 'candidate' && !this.primary) role = 'primary';
    if (role === 'primary' && this.primary) return;
    if (role === 'candidate' && this.primary && token.value === this.primary.token.value) {
      // The token manager has not renewed yet; ask again shortly, until the old token runs out.
      const left = this.primary.token.expiresAt - this.clock.now();
      if (left > 0) this.scheduleRotationIn(Math.max(250, Math.min(5_000, left / 4)));
      return;
    }
    this.connect(role, token);
  }

  private connect(role: Role, token: AccessToken): void {
    const conn: Connection = {
      id: this.nextId++,
      role,
      token,
      phase: 'connecting',
      watch: new HeartbeatWatch(this.clock, this.heartbeatMs),
      retired: false,
      tokenExpired: false,
      foundDead: false,
      closedWaiters: [],
    };
    if (role === 'primary') this.primary = conn;
    else this.candidate = conn;
    this.logger.debug('opening socket', { conn: conn.id, role });
    try {
      conn.socket = this.createSocket(
        this.url,
        { Authorization: `Bearer ${token.value}`, 'User-Agent': this.userAgent },
        {
          open: () => this.onOpen(conn),
          message: (text) => this.onMessage(conn, text),
          rejected: (status, body) => {
            conn.rejection = handshakeRejection(status, body);
          },
          error: (error) => {
            conn.failure = networkFault(error, this.url, 'subscribe') ?? conn.failure;
            this.logger.debug('socket error', { conn: conn.id, error: error.message });
          },
          closed: (code, reason) => this.onClosed(conn, code, reason),
        },
      );
    } catch (error) {
      this.logger.warn('cannot create socket', {
        error: error instanceof Error ? error.message : String(error),
      });
      this.onClosed(conn, 1006, 'socket creation failed');
    }
  }

  private onOpen(conn: Connection): void {
    if (conn.phase !== 'connecting') return;
    conn.phase = 'open';
    conn.watch = new HeartbeatWatch(this.clock, this.heartbeatMs);
    conn.socket?.send(JSON.stringify({ topic_list: this.topics }));
  }

  // ---- receiving ----

  private onMessage(conn: Connection, text: string): void {
    conn.watch.heard();
    if (text === HEARTBEAT_RESPONSE) return;
    const control = controlMessage(text);
    if (control) {
      this.onControl(conn, control);
      return;
    }
    this.frames.emit(text, this.clock.now());
  }

  private onControl(conn: Connection, message: { errcode: number; errmsg: string }): void {
    const { errcode } = message;
    const scope = errcode === ERRCODE.insufficientScope;
    if ((errcode === ERRCODE.ok || scope) && conn.phase === 'open') {
      this.onSubscribed(conn, scope ? missingCodes(message.errmsg, this.topics) : []);
    } else if (errcode === ERRCODE.invalidCredentials || errcode === ERRCODE.ipNotAllowed) {
      // The key was revoked or the IP blocked while connected; the server closes next.
      this.needAttention(describeErrcode(errcode));
    } else if (errcode === ERRCODE.tokenExpired) {
      this.logger.info('token expired on the socket', { conn: conn.id });
      conn.tokenExpired = true;
      this.tokens.invalidate(conn.token.value);
    } else {
      this.logger.warn('service error on the socket', { conn: conn.id, errcode });
    }
  }

  private onSubscribed(conn: Connection, missing: number[]): void {
    conn.phase = 'subscribed';
    this.noteRefused(missing);
    this.tokenRetryUsed = false;
    if (conn.role === 'candidate') {
      const old = this.primary;
      this.candidate = undefined;
      conn.role = 'primary';
      this.primary = conn;
      if (old) void this.retire(old, 1000, 'replaced by a newer connection');
      this.logger.info('switched to the new socket', { conn: conn.id, replaced: old?.id });
    } else {
      this.logger.info('subscribed', { conn: conn.id, topics: this.topics });
    }
    // Without a code other than calls' only its feature is off (features.ts says so, with the
    // remedy); the connection itself is fine. Without calls, nothing pops: that is degraded.
    if (missing.includes(CALL_STATE_CHANGED)) {
      const scope = describeErrcode(ERRCODE.insufficientScope);
      const reason: Phrase[] = [
        ...scope.words.reason,
        hintPhrase('scope-events', { codes: missing.join(', ') }),
      ];
      if (missing.includes(CALL_STATE_CHANGED)) reason.push(hintPhrase('scope-no-call-events'));
      const scopes = missing.map((code) => `event:${code}`).join(', ');
      this.setStatus(
        saidStatus(
          'degraded',
          reason,
          [...scope.words.remedy, hintPhrase('scope-missing', { scopes })],
          scope.errcode,
        ),
      );
    } else {
      this.setStatus({ state: 'connected' });
    }
    this.scheduleRotation(conn.token);
    this.clock.clearTimeout(this.stableTimer);
    this.stableTimer = this.clock.setTimeout(() => this.backoff.reset(), this.stableMs);
  }

  /** The subscribed codes the service refused for lack of scope (10003), as last subscribed. */
  refusedTopics(): number[] {
    return [...this.refused];
  }

  /** Every change of refusedTopics() from now on. */
  onRefusedTopics(listener: (codes: number[]) => void): () => void {
    return this.refusedChanges.on(listener);
  }

  private noteRefused(codes: number[]): void {
    const sorted = [...codes].sort((a, b) => a - b);
    if (sorted.join() === this.refused.join()) return;
    this.refused = sorted;
    if (sorted.length > 0)
      this.logger.warn('event codes refused for lack of scope', { codes: sorted });
    this.refusedChanges.emit([...sorted]);
  }

  // ---- closing ----

  private onClosed(conn: Connection, code: number, reason: string): void {
    if (conn.phase === 'closed') return;
    const wasSubscribed = conn.phase === 'subscribed';
    conn.phase = 'closed';
    for (const waiter of conn.closedWaiters.splice(0)) waiter();
    if (conn.retired || !this.running) return;
    this.logger.info('socket closed', {
      conn: conn.id,
      role: conn.role,
      code,
      // Whole (RFC 6455 keeps it within 123 bytes): the logger scrubs secrets, which a cut here
      // would leave behind as their first characters.
      reason,
      dead: conn.foundDead,
    });
    if (conn.tokenExpired || code === 4002) this.tokens.invalidate(conn.token.value);

    if (conn === this.candidate) {
      this.candidate = undefined;
      if (this.attention) return;
      if (conn.rejection && this.needsUser(conn.rejection)) return;
      if (conn.failure && describeError(conn.failure).needsUser)
        return this.needAttention(describeError(conn.failure));
      // Retry the replacement soon; the old socket keeps delivering until the server drops it.
      const expired = conn.rejection?.errcode === ERRCODE.tokenExpired || conn.tokenExpired;
      this.scheduleRotationIn(expired ? 0 : 5_000);
      return;
    }
    if (conn !== this.primary) return;
    this.primary = undefined;
    this.clock.clearTimeout(this.stableTimer);
    this.clock.clearTimeout(this.rotationTimer);
    if (this.attention) return;
    if (this.candidate) {
      // A replacement is already on its way: it becomes the connection.
      this.candidate.role = 'primary';
      this.primary = this.candidate;
      this.candidate = undefined;
      return;
    }
    if (this.pendingCandidate) return; // open() turns the pending candidate into the primary

    if (conn.failure) {
      // A proxy or certificate fault, named: a person fixes those (needs attention); an
      // unreachable proxy is retried after the back-off like an unreachable service.
      const fault = describeError(conn.failure);
      this.logger.warn('socket failed', { fault: fault.fault, error: conn.failure.message });
      if (fault.needsUser) return this.needAttention(fault);
      this.setStatus(faultStatus('offline', fault));
      this.scheduleReconnect(this.backoff.next());
      return;
    }

    if (conn.rejection) {
      if (this.needsUser(conn.rejection)) return;
      const expired =
        conn.rejection.errcode === ERRCODE.tokenExpired ||
        (conn.rejection.status === 401 && conn.rejection.errcode === undefined);
      if (expired) {
        this.tokens.invalidate(conn.token.value);
        this.retryAfterTokenExpiry(phrase('status.token-refused'));
        return;
      }
      this.setStatus(
        saidStatus(
          'offline',
          [phrase('status.service-refused', { status: conn.rejection.status })],
          undefined,
          conn.rejection.errcode,
        ),
      );
      this.scheduleReconnect(this.backoff.next());
      return;
    }
    if (conn.tokenExpired || code === 4002) {
      this.retryAfterTokenExpiry(phrase('status.token-expired-reconnecting'));
      return;
    }
    if (wasSubscribed) {
      const why = conn.foundDead
        ? phrase('status.went-silent')
        : phrase('status.closed', { code: String(code) });
      this.setStatus(saidStatus('connecting', [why]));
    } else {
      this.setStatus(saidStatus('offline', [phrase('status.cannot-reach')]));
    }
    this.scheduleReconnect(this.backoff.next());
  }

  /** 10002: reconnect with a new token at once, the first time; back off if it happens again. */
  private retryAfterTokenExpiry(reason: Phrase): void {
    this.setStatus(saidStatus('connecting', [reason]));
    const delay = this.tokenRetryUsed ? this.backoff.next() : 0;
    this.tokenRetryUsed = true;
    this.scheduleReconnect(delay);
  }

  /** A refusal a person must fix (10001, 10004; a bare 403 is a 10004): stop, ask. True if so. */
  private needsUser(rejection: HandshakeRejection): boolean {
    const errcode =
      rejection.errcode ?? (rejection.status === 403 ? ERRCODE.ipNotAllowed : undefined);
    if (errcode === undefined) return false;
    const fault = describeErrcode(errcode);
    if (!fault.needsUser) return false;
    this.needAttention(fault);
    return true;
  }

  private needAttention(fault: ErrorDescription): void {
    this.attention = true;
    this.clock.clearTimeout(this.reconnectTimer);
    this.clock.clearTimeout(this.rotationTimer);
    for (const conn of [this.primary, this.candidate])
      if (conn && conn.phase !== 'closed') void this.retire(conn, 1000, 'needs attention');
    this.primary = undefined;
    this.candidate = undefined;
    this.logger.warn('needs attention; not retrying until the user acts', {
      fault: fault.fault,
      errcode: fault.errcode,
    });
    this.setStatus(faultStatus('needs-attention', fault));
  }

  private onTokenError(error: unknown, role: Role): void {
    const fault = describeError(error);
    this.logger.warn('cannot get an access token', {
      fault: fault.fault,
      errcode: fault.errcode,
      error: error instanceof Error ? error.message : String(error),
    });
    if (fault.needsUser) {
      this.needAttention(fault);
      return;
    }
    if (role === 'candidate' && this.primary) {
      this.scheduleRotationIn(5_000);
      return;
    }
    this.setStatus(faultStatus('offline', fault));
    this.scheduleReconnect(this.backoff.next());
  }

  /** Closes `conn` on purpose; resolves when it is closed (terminated after 1 s without an answer). */
  private retire(conn: Connection, code: number, reason: string): Promise<void> {
    conn.retired = true;
    if (conn.phase === 'closed') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const fallback = this.clock.setTimeout(() => conn.socket?.terminate(), 1_000);
      conn.closedWaiters.push(() => {
        this.clock.clearTimeout(fallback);
        resolve();
      });
      if (conn.socket) conn.socket.close(code, reason);
      else this.onClosed(conn, code, reason);
    });
  }

  // ---- timers ----

  private scheduleReconnect(delay: number): void {
    this.clock.clearTimeout(this.reconnectTimer);
    this.logger.debug('reconnecting after', {
      delayMs: Math.round(delay),
      attempt: this.backoff.attempts,
    });
    this.reconnectTimer = this.clock.setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.open('primary');
    }, delay);
  }

  private scheduleRotation(token: AccessToken): void {
    const left = token.expiresAt - this.clock.now();
    const lead = Math.min(this.rotateLeadMs, Math.max(0, left / 2));
    this.scheduleRotationIn(Math.max(0, left - lead));
  }

  private scheduleRotationIn(delay: number): void {
    this.clock.clearTimeout(this.rotationTimer);
    this.rotationTimer = this.clock.setTimeout(() => {
      this.rotationTimer = undefined;
      if (this.running && !this.attention && this.primary) void this.open('candidate');
    }, delay);
  }

  /** Wake or wall-clock jump: replace the connection now, make-before-break when there is one. */
  private replaceNow(): void {
    this.clock.clearTimeout(this.reconnectTimer);
    const primary = this.primary;
    if (!primary) {
      void this.open('primary');
      return;
    }
    if (primary.phase === 'connecting') {
      // A handshake hanging from before the wake: drop it and start over.
      this.primary = undefined;
      void this.retire(primary, 1000, 'replaced');
      void this.open('primary');
      return;
    }
    primary.socket?.send(HEARTBEAT);
    void this.open('candidate');
  }

  private scheduleTick(): void {
    this.tickTimer = this.clock.setTimeout(() => this.tick(), this.heartbeatMs / 2);
  }

  private tick(): void {
    if (!this.running) return;
    const wall = this.clock.now();
    const mono = this.clock.monotonic();
    const last = this.lastTick;
    this.lastTick = { wall, mono };
    if (last) {
      const jump = wall - last.wall - (mono - last.mono);
      if (jump > this.jumpThresholdMs) {
        this.logger.info('wall clock jumped ahead of the monotonic clock: the machine slept', {
          jumpMs: Math.round(jump),
        });
        this.scheduleTick();
        this.wake('clock-jump');
        return;
      }
      if (jump < -this.jumpThresholdMs)
        this.logger.info('wall clock was set back', { jumpMs: Math.round(jump) });
    }
    for (const conn of [this.primary, this.candidate]) {
      if (!conn || conn.phase === 'closed') continue;
      if (conn.watch.silent()) {
        this.logger.warn('socket silent for two heartbeat intervals; dropping it', {
          conn: conn.id,
          phase: conn.phase,
        });
        conn.foundDead = true;
        conn.socket?.terminate();
        continue;
      }
      if (conn.phase !== 'connecting' && conn.watch.heartbeatDue()) conn.socket?.send(HEARTBEAT);
    }
    this.scheduleTick();
  }

  private setStatus(status: ConnectionStatus): void {
    this.current.set(status);
  }
}

/** `{"errcode":N,...}` frames (acks, token expiry) as opposed to event envelopes. */
function controlMessage(text: string): { errcode: number; errmsg: string } | undefined {
  if (text.length > 4096 || !text.includes('"errcode"')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value) || 'event' in value)
      return undefined;
    const { errcode, errmsg } = value as { errcode?: unknown; errmsg?: unknown };
    if (typeof errcode !== 'number') return undefined;
    return { errcode, errmsg: typeof errmsg === 'string' ? errmsg : '' };
  } catch {
    return undefined;
  }
}

/** The subscribed codes a 10003 message names (all of them when it names none we asked for). */
export function missingCodes(errmsg: string, topics: number[]): number[] {
  const named = (errmsg.match(/\d+/g) ?? []).map(Number).filter((n) => topics.includes(n));
  return named.length > 0 ? [...new Set(named)] : [...topics];
}
