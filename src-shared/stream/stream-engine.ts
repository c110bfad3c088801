/**
 * The one reconnect engine for every event stream kept open over a WebSocket: the service's direct
 * stream (src-main/core/events/ws-source.ts), the organisation's relay
 * (src-main/core/relay-client/relay-source.ts), and any further one (a second phone system's
 * stream, a gateway's own upstream). A stream supplies its protocol (StreamProtocol: what a
 * connection needs, its address, what to say when it opens, what its frames mean, how to judge
 * its end); the engine keeps it alive, the same way for all of them:
 *
 * - Back-off: a failed attempt waits the STREAM_BACKOFF (full jitter, backoff.ts); the back-off
 *   starts again from its base only after a connection stayed ready `stableMs` (30 s), so a far
 *   side that accepts and drops at once still backs off.
 * - At once, once: the verdict `at-once` (the far side asks for a new credential: 401 with 10002,
 *   close 4002) reconnects without waiting only while the back-off is at its base, and counts as a
 *   failure: a far side that drops every new connection at once gets the growing wait, no loop.
 * - Connect time-out: a connection not ready `connectTimeoutMs` (15 s) after its last sign of life
 *   (the attempt, or any frame before ready: a long replay keeps it alive) is abandoned; an address
 *   that swallows packets would otherwise hold the attempt for minutes.
 * - Heartbeat: a check every half interval sends the protocol's heartbeat once per interval
 *   (heartbeat-watch.ts) and terminates an open connection from which nothing at all arrived for
 *   two intervals: the only way to notice a half-open TCP connection.
 * - Sleep and wake: the same check compares how far the wall clock and the monotonic clock moved;
 *   a wall clock `jumpThresholdMs` (10 s) ahead means the machine slept, and the connection is
 *   replaced as on wake('clock-jump'). wake() replaces it at once, make-before-break (a second
 *   connection is made ready, then the first is closed) or by dropping it, as the stream chooses;
 *   wake('user') also clears needs-attention and starts the back-off again from its base.
 * - Credentials that expire: when the protocol says when a grant expires, the connection is
 *   replaced make-before-break `rotateLeadMs` (TOKEN_RENEW_MARGIN_MS, 60 s) before.
 * - Faults: every end of a connection (refused handshake, proxy or certificate fault, close code,
 *   found dead) and every failed grant is judged by the protocol into one of three verdicts:
 *   back-off, at-once, or attention (no retries until wake('user')).
 *
 * Times come from the injected clock. A stale callback (a socket or a grant from before a stop, a
 * replacement, a drop) is recognised by its generation and dropped. The engine holds no words:
 * statuses are the protocol's (`Status`), reported through `status()`; frames are the
 * protocol's to hand on.
 */
import { Backoff, STREAM_BACKOFF } from '../kit/backoff.ts';
import type { Clock, TimerHandle } from '../process/clock.ts';
import { Generation } from '../kit/generation.ts';
import { HeartbeatWatch } from './heartbeat-watch.ts';
import { TOKEN_RENEW_MARGIN_MS } from '../api/token-lifecycle.ts';
import type { Logger } from '../process/log.ts';
import {
  handshakeRejection,
  type CreateSocket,
  type HandshakeRejection,
  type SocketConnection,
} from './socket.ts';

/** Why a source should replace its connection at once instead of waiting (an OS hint, the user). */
export type WakeReason = 'resume' | 'online' | 'clock-jump' | 'user';

/** What happens after a connection ended or a grant failed. */
export type Verdict<Status> =
  /** Wait the back-off, then try again. */
  | { next: 'back-off'; status?: Status }
  /**
   * Try again now, if the back-off is at its base (else as back-off). `ifWaiting` is reported
   * only when it cannot be at once.
   */
  | { next: 'at-once'; status?: Status; ifWaiting?: Status }
  /** A person must act (a revoked key, a blocked address): no retries until wake('user'). */
  | { next: 'attention'; status: Status };

/** How a connection ended, for the protocol to judge. */
export interface StreamEnd {
  code: number;
  reason: string;
  /** The handshake was answered with an HTTP status instead of 101. */
  rejection?: HandshakeRejection;
  /** The last error the socket reported (a proxy, certificate or network failure). */
  error?: Error;
  /** It had been made ready (subscribed, replayed). */
  wasReady: boolean;
  /** The engine ended it: silent for two heartbeat intervals, or not ready in time. */
  foundDead: boolean;
  /** A reconnection at once was made since a connection was last ready. */
  atOnceSpent: boolean;
}

/** One connection, as the protocol sees it. */
export interface StreamLink<Grant, S> {
  readonly id: number;
  /** What it was opened with (an access token...). */
  readonly grant: Grant;
  send(text: string): void;
  /**
   * The connection is established (subscribed, replayed): from now on it is the stream's
   * connection (a replacement takes over from the one it replaces), its connect time-out is
   * cleared, and `status` is reported.
   */
  ready(status: S): void;
  /** True once ready() was called. */
  readonly isReady: boolean;
}

export interface StreamProtocol<Grant, S> {
  /** What one connection needs, fetched before each attempt (an access token). */
  grant(): Promise<Grant>;
  /** The socket's address and handshake headers for a grant. */
  address(grant: Grant): { url: string; headers: Record<string, string> };
  /** The socket opened: say hello (subscribe, the relay's hello). */
  opened(link: StreamLink<Grant, S>): void;
  /** A text frame arrived on `link` (heartbeat answers included: they are what liveness hears). */
  message(link: StreamLink<Grant, S>, text: string): void;
  /** The text frame sent once per heartbeat interval. */
  readonly heartbeat: string;
  /** Judges an ended connection (not one the engine retired on purpose). */
  ended(link: StreamLink<Grant, S>, end: StreamEnd): Verdict<S>;
  /** Judges a grant() that failed. */
  grantFailed(error: unknown): Verdict<S>;
  /** The status to report when an attempt begins (none: keep the current one). */
  connecting?(): S | undefined;
  /** When a grant stops working (ms since the epoch), for the make-before-break rotation. */
  expiresAt?(grant: Grant): number;
  /** Whether `next` is a renewal of `current` (a rotation must not reopen with the same grant). */
  renewed?(current: Grant, next: Grant): boolean;
}

/** The engine's timings, which every stream source passes through as its callers set them. */
export interface StreamTuning {
  /** Heartbeat interval; default 25 s (the far sides close a socket silent for 60 s). */
  heartbeatMs?: number;
  /** Randomness for the back-off jitter (tests pass a fixed one). */
  random?: () => number;
  /** Changes to STREAM_BACKOFF. */
  backoff?: { baseMs?: number; capMs?: number };
  /** How long a connection must stay ready before the back-off starts again from its base. */
  stableMs?: number;
  /** How long a connection may take to become ready after its last sign of life; default 15 s. */
  connectTimeoutMs?: number;
  /** A wall-clock jump ahead of the monotonic clock larger than this means the machine slept. */
  jumpThresholdMs?: number;
}

/** The timings a source's caller set, and only those (an unset one keeps the engine's default). */
export function streamTuning(from: StreamTuning): StreamTuning {
  return {
    ...(from.heartbeatMs !== undefined && { heartbeatMs: from.heartbeatMs }),
    ...(from.random && { random: from.random }),
    ...(from.backoff && { backoff: from.backoff }),
    ...(from.stableMs !== undefined && { stableMs: from.stableMs }),
    ...(from.connectTimeoutMs !== undefined && { connectTimeoutMs: from.connectTimeoutMs }),
    ...(from.jumpThresholdMs !== undefined && { jumpThresholdMs: from.jumpThresholdMs }),
  };
}

export interface StreamEngineOptions<S> extends StreamTuning {
  clock: Clock;
  logger: Logger;
  createSocket: CreateSocket;
  /** Where statuses go (the source's StatusHolder). */
  status(status: S): void;
  /** How long before its grant expires a connection is replaced; default 60 s. */
  rotateLeadMs?: number;
  /**
   * How wake() replaces a connection: 'make-before-break' opens the new one and closes the old
   * one only when the new one is ready (a stream without replay: nothing may be missed meanwhile);
   * 'drop' ends the old one and connects again at once (a stream that resumes from a cursor).
   */
  replace: 'make-before-break' | 'drop';
  /** The status reported when wake() drops a connection ('drop' only). */
  droppedStatus?: () => S;
}

type Role = 'primary' | 'candidate';

interface Link<Grant, S> extends StreamLink<Grant, S> {
  role: Role;
  socket?: SocketConnection;
  phase: 'connecting' | 'open' | 'ready' | 'closed';
  watch: HeartbeatWatch;
  /** Closed on purpose (replaced, stopping, attention): its end is not judged. */
  retired: boolean;
  foundDead: boolean;
  rejection?: HandshakeRejection;
  error?: Error;
  connectTimer?: TimerHandle;
  closedWaiters: Array<() => void>;
}

export class StreamEngine<Grant, S> {
  private readonly protocol: StreamProtocol<Grant, S>;
  private readonly options: StreamEngineOptions<S>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly backoff: Backoff;
  private readonly heartbeatMs: number;
  private readonly stableMs: number;
  private readonly connectTimeoutMs: number;
  private readonly jumpThresholdMs: number;
  private readonly rotateLeadMs: number;

  private running = false;
  /** Set by an `attention` verdict: no retries until wake('user'). */
  private attention = false;
  private primary: Link<Grant, S> | undefined;
  private candidate: Link<Grant, S> | undefined;
  /** A grant is being fetched for that role. */
  private pending: Record<Role, boolean> = { primary: false, candidate: false };
  /** Bumped by stop(): grants that arrive afterwards are dropped. */
  private readonly generation = new Generation();
  /** A reconnection at once was made since a connection was last ready (StreamEnd.atOnceSpent). */
  private atOnceSpent = false;
  private nextId = 1;
  private retryTimer: TimerHandle | undefined;
  private rotationTimer: TimerHandle | undefined;
  private stableTimer: TimerHandle | undefined;
  private tickTimer: TimerHandle | undefined;
  private lastTick: { wall: number; mono: number } | undefined;

  constructor(protocol: StreamProtocol<Grant, S>, options: StreamEngineOptions<S>) {
    this.protocol = protocol;
    this.options = options;
    this.clock = options.clock;
    this.logger = options.logger;
    this.backoff = new Backoff({ ...STREAM_BACKOFF, ...options.backoff }, options.random);
    this.heartbeatMs = options.heartbeatMs ?? 25_000;
    this.stableMs = options.stableMs ?? 30_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
    this.jumpThresholdMs = options.jumpThresholdMs ?? 10_000;
    this.rotateLeadMs = options.rotateLeadMs ?? TOKEN_RENEW_MARGIN_MS;
  }

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attention = false;
    this.lastTick = { wall: this.clock.now(), mono: this.clock.monotonic() };
    this.scheduleTick();
    void this.open('primary');
  }

  /** Closes every connection (resolves when closed) and clears every timer. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.generation.bump();
    this.pending = { primary: false, candidate: false };
    for (const timer of [this.retryTimer, this.rotationTimer, this.stableTimer, this.tickTimer])
      this.clock.clearTimeout(timer);
    const closing = [this.primary, this.candidate].filter(
      (c): c is Link<Grant, S> => !!c && c.phase !== 'closed',
    );
    this.primary = undefined;
    this.candidate = undefined;
    await Promise.all(closing.map((c) => this.retire(c, 1000, 'client stopping')));
  }

  wake(reason: WakeReason): void {
    if (!this.running) return;
    this.logger.info('wake', { reason });
    if (reason === 'user') {
      this.attention = false;
      this.atOnceSpent = false;
    }
    // The user asked, or the network came back: the waits grown meanwhile start again from the base.
    if (reason === 'user' || reason === 'online') this.backoff.reset();
    if (this.attention) return;
    this.replaceNow();
  }

  /**
   * A person must act (the key was revoked while connected): every connection is closed and no
   * retries are made until wake('user').
   */
  needAttention(status: S): void {
    this.attention = true;
    this.logger.warn('needs attention; not retrying until the user acts');
    this.clock.clearTimeout(this.retryTimer);
    this.clock.clearTimeout(this.rotationTimer);
    this.clock.clearTimeout(this.stableTimer);
    for (const link of [this.primary, this.candidate])
      if (link && link.phase !== 'closed') void this.retire(link, 1000, 'needs attention');
    this.primary = undefined;
    this.candidate = undefined;
    this.options.status(status);
  }

  // ---- opening ----

  private async open(role: Role): Promise<void> {
    if (this.pending[role] || (role === 'primary' ? this.primary : this.candidate)) return;
    const current = this.generation.ticket();
    this.pending[role] = true;
    if (role === 'primary') {
      const connecting = this.protocol.connecting?.();
      if (connecting !== undefined) this.options.status(connecting);
    }
    let grant: Grant;
    try {
      grant = await this.protocol.grant();
    } catch (error) {
      if (!current()) return;
      this.pending[role] = false;
      if (!this.running || this.attention) return;
      const verdict = this.protocol.grantFailed(error);
      if (role === 'candidate' && this.primary && verdict.next !== 'attention') {
        this.rotateIn(5_000); // the current connection keeps delivering meanwhile
        return;
      }
      this.apply(verdict);
      return;
    }
    if (!current()) return;
    this.pending[role] = false;
    if (!this.running || this.attention) return;
    if (role === 'candidate' && !this.primary) role = 'primary';
    if (role === 'primary' && this.primary) return;
    if (role === 'candidate' && this.primary && !this.isRenewal(this.primary.grant, grant)) {
      // The grant was not renewed yet: ask again shortly, until the current one runs out.
      const left = this.expiry(this.primary.grant) - this.clock.now();
      if (left > 0) this.rotateIn(Math.max(250, Math.min(5_000, left / 4)));
      return;
    }
    this.connect(role, grant);
  }

  private isRenewal(current: Grant, next: Grant): boolean {
    if (this.protocol.renewed) return this.protocol.renewed(current, next);
    return this.expiry(next) > this.expiry(current);
  }

  private expiry(grant: Grant): number {
    return this.protocol.expiresAt?.(grant) ?? Number.POSITIVE_INFINITY;
  }

  private connect(role: Role, grant: Grant): void {
    const link: Link<Grant, S> = {
      id: this.nextId++,
      role,
      grant,
      phase: 'connecting',
      watch: new HeartbeatWatch(this.clock, this.heartbeatMs),
      retired: false,
      foundDead: false,
      closedWaiters: [],
      send: (text) => {
        if (link.phase !== 'closed') link.socket?.send(text);
      },
      ready: (status) => this.onReady(link, status),
      get isReady() {
        return link.phase === 'ready';
      },
    };
    if (role === 'primary') this.primary = link;
    else this.candidate = link;
    const { url, headers } = this.protocol.address(grant);
    this.logger.debug('opening socket', { conn: link.id, role });
    this.armConnectTimer(link);
    try {
      link.socket = this.options.createSocket(url, headers, {
        open: () => this.guard(link, () => this.onOpen(link)),
        message: (text) => this.guard(link, () => this.onMessage(link, text)),
        rejected: (status, body) => {
          link.rejection = handshakeRejection(status, body);
        },
        error: (error) => {
          link.error = error;
          this.logger.debug('socket error', { conn: link.id, error });
        },
        closed: (code, reason) => this.onClosed(link, code, reason),
      });
    } catch (error) {
      this.logger.warn('cannot create socket', {
        error,
      });
      this.onClosed(link, 1006, 'socket creation failed');
    }
  }

  /** Runs a socket callback of a connection that is still open; a closed one's are dropped. */
  private guard(link: Link<Grant, S>, run: () => void): void {
    if (link.phase === 'closed' || link.retired) return;
    run();
  }

  private onOpen(link: Link<Grant, S>): void {
    if (link.phase !== 'connecting') return;
    link.phase = 'open';
    link.watch = new HeartbeatWatch(this.clock, this.heartbeatMs);
    this.armConnectTimer(link);
    this.protocol.opened(link);
  }

  private onMessage(link: Link<Grant, S>, text: string): void {
    link.watch.heard();
    if (link.phase !== 'ready') this.armConnectTimer(link);
    this.protocol.message(link, text);
  }

  private onReady(link: Link<Grant, S>, status: S): void {
    if (link.phase === 'closed' || link.retired) return;
    const first = link.phase !== 'ready';
    link.phase = 'ready';
    this.atOnceSpent = false;
    this.clock.clearTimeout(link.connectTimer);
    if (first && link.role === 'candidate') {
      const old = this.primary;
      this.candidate = undefined;
      link.role = 'primary';
      this.primary = link;
      if (old) void this.retire(old, 1000, 'replaced by a newer connection');
      this.logger.info('switched to the new connection', { conn: link.id, replaced: old?.id });
    } else if (first) {
      this.logger.info('connection ready', { conn: link.id });
    }
    this.options.status(status);
    if (!first) return;
    this.scheduleRotation(link.grant);
    this.clock.clearTimeout(this.stableTimer);
    this.stableTimer = this.clock.setTimeout(() => this.backoff.reset(), this.stableMs);
  }

  /** A connection that shows no sign of life for connectTimeoutMs before ready is abandoned. */
  private armConnectTimer(link: Link<Grant, S>): void {
    this.clock.clearTimeout(link.connectTimer);
    link.connectTimer = this.clock.setTimeout(() => {
      if (link.phase === 'ready' || link.phase === 'closed' || link.retired) return;
      this.logger.warn('connection not ready in time; abandoning it', {
        conn: link.id,
        phase: link.phase,
      });
      link.foundDead = true;
      this.terminate(link); // its `closed` follows, and with it the verdict
    }, this.connectTimeoutMs);
  }

  private terminate(link: Link<Grant, S>): void {
    if (link.socket) link.socket.terminate();
    else this.onClosed(link, 1006, 'no socket');
  }

  // ---- closing ----

  private onClosed(link: Link<Grant, S>, code: number, reason: string): void {
    if (link.phase === 'closed') return;
    const wasReady = link.phase === 'ready';
    link.phase = 'closed';
    this.clock.clearTimeout(link.connectTimer);
    for (const waiter of link.closedWaiters.splice(0)) waiter();
    if (link.retired || !this.running) return;
    this.logger.info('connection closed', {
      conn: link.id,
      role: link.role,
      code,
      // Whole (RFC 6455 keeps it within 123 bytes): the logger scrubs secrets, which a cut here
      // would leave behind as their first characters.
      reason,
      dead: link.foundDead,
    });
    const end: StreamEnd = {
      code,
      reason,
      wasReady,
      foundDead: link.foundDead,
      atOnceSpent: this.atOnceSpent,
      ...(link.rejection && { rejection: link.rejection }),
      ...(link.error && { error: link.error }),
    };
    const verdict = this.protocol.ended(link, end);

    if (link === this.candidate) {
      this.candidate = undefined;
      if (this.attention) return;
      if (verdict.next === 'attention') return this.needAttention(verdict.status);
      // Retry the replacement soon; the current connection keeps delivering until it ends.
      this.rotateIn(verdict.next === 'at-once' ? 0 : 5_000);
      return;
    }
    if (link !== this.primary) return;
    this.primary = undefined;
    this.clock.clearTimeout(this.stableTimer);
    this.clock.clearTimeout(this.rotationTimer);
    if (this.attention) return;
    if (verdict.next !== 'attention' && (this.candidate || this.pending.candidate)) {
      // A replacement is on its way: it becomes the connection.
      if (this.candidate) {
        this.candidate.role = 'primary';
        this.primary = this.candidate;
        this.candidate = undefined;
      }
      return;
    }
    this.apply(verdict);
  }

  private apply(verdict: Verdict<S>): void {
    if (verdict.next === 'attention') {
      this.needAttention(verdict.status);
      return;
    }
    if (verdict.status !== undefined) this.options.status(verdict.status);
    const atOnce = verdict.next === 'at-once' && this.backoff.attempts === 0;
    if (verdict.next === 'at-once' && !atOnce && verdict.ifWaiting !== undefined)
      this.options.status(verdict.ifWaiting);
    if (atOnce) this.atOnceSpent = true;
    const wait = this.backoff.next();
    this.retryIn(atOnce ? 0 : wait);
  }

  /** Closes `link` on purpose; resolves when closed (terminated after 1 s without an answer). */
  private retire(link: Link<Grant, S>, code: number, reason: string): Promise<void> {
    link.retired = true;
    this.clock.clearTimeout(link.connectTimer);
    if (link.phase === 'closed') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const fallback = this.clock.setTimeout(() => link.socket?.terminate(), 1_000);
      link.closedWaiters.push(() => {
        this.clock.clearTimeout(fallback);
        resolve();
      });
      // A handshake still on its way has nothing to close gracefully: it is dropped.
      if (link.socket && link.phase === 'connecting') link.socket.terminate();
      else if (link.socket) link.socket.close(code, reason);
      else this.onClosed(link, code, reason);
    });
  }

  // ---- timers ----

  private retryIn(delay: number): void {
    this.clock.clearTimeout(this.retryTimer);
    this.logger.debug('reconnecting after', {
      delayMs: Math.round(delay),
      attempt: this.backoff.attempts,
    });
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      void this.open('primary');
    }, delay);
  }

  private scheduleRotation(grant: Grant): void {
    this.clock.clearTimeout(this.rotationTimer);
    const expires = this.expiry(grant);
    if (!Number.isFinite(expires)) return;
    const left = expires - this.clock.now();
    const lead = Math.min(this.rotateLeadMs, Math.max(0, left / 2));
    this.rotateIn(Math.max(0, left - lead));
  }

  private rotateIn(delay: number): void {
    this.clock.clearTimeout(this.rotationTimer);
    this.rotationTimer = this.clock.setTimeout(() => {
      this.rotationTimer = undefined;
      if (this.running && !this.attention && this.primary) void this.open('candidate');
    }, delay);
  }

  /** Wake or wall-clock jump: replace the connection now. */
  private replaceNow(): void {
    this.clock.clearTimeout(this.retryTimer);
    const primary = this.primary;
    if (!primary) {
      void this.open('primary');
      return;
    }
    if (primary.phase === 'connecting' || this.options.replace === 'drop') {
      // A handshake hanging from before the wake, or a stream that resumes from a cursor: drop it
      // and start over.
      this.primary = undefined;
      this.clock.clearTimeout(this.stableTimer);
      this.clock.clearTimeout(this.rotationTimer);
      void this.retire(primary, 1000, 'replaced');
      if (primary.phase !== 'connecting' && this.options.droppedStatus)
        this.options.status(this.options.droppedStatus());
      void this.open('primary');
      return;
    }
    primary.send(this.protocol.heartbeat);
    void this.open('candidate');
  }

  private scheduleTick(): void {
    this.tickTimer = this.clock.setTimeout(() => this.tick(), this.heartbeatMs / 2);
  }

  /** Every half interval: sleep detection, dead connections, heartbeats. */
  private tick(): void {
    if (!this.running) return;
    const wall = this.clock.now();
    const mono = this.clock.monotonic();
    const last = this.lastTick;
    this.lastTick = { wall, mono };
    this.scheduleTick();
    if (last) {
      const jump = wall - last.wall - (mono - last.mono);
      if (jump > this.jumpThresholdMs) {
        this.logger.info('wall clock jumped ahead of the monotonic clock: the machine slept', {
          jumpMs: Math.round(jump),
        });
        this.wake('clock-jump');
        return;
      }
      if (jump < -this.jumpThresholdMs)
        this.logger.info('wall clock was set back', { jumpMs: Math.round(jump) });
    }
    for (const link of [this.primary, this.candidate]) {
      if (!link || link.phase === 'closed' || link.phase === 'connecting') continue;
      if (link.watch.silent()) {
        this.logger.warn('connection silent for two heartbeat intervals; dropping it', {
          conn: link.id,
          phase: link.phase,
        });
        link.foundDead = true;
        this.terminate(link);
        continue;
      }
      if (link.watch.heartbeatDue()) link.send(this.protocol.heartbeat);
    }
  }
}
