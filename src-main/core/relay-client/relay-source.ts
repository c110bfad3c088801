/**
 * The webhook relay as an event source (docs/relay-protocol.md): one WebSocket to the
 * organisation's relay, which replays what this desktop missed and then streams live events.
 *
 * - Handshake: `Authorization: Bearer <service access token>` (from the TokenSource) on the upgrade
 *   to `<relay>/v1/stream/<tenant>`; wss is required unless the relay is on this machine.
 * - Hello: right after open, the filter (the user's extensions, DIDs, opt-in event codes) and the
 *   last cursor this desktop processed; the relay replays everything after it, sends a `gap`
 *   notice first when retention no longer covers it, then `ready`.
 * - Liveness: `{"type":"heartbeat"}` every `heartbeatMs`; a socket with nothing received for two
 *   intervals is terminated and replaced (half-open TCP after sleep or a network change).
 * - Reconnect: back-off with full jitter on the injected clock. A 4002 (re-authorise) after a
 *   stable session, and a 401 with 10002 (token invalidated first) once, reconnect at once; a 4002
 *   again before the back-off was reset waits like any other drop (a relay that closes every
 *   session at once must not get a reconnect loop). A 403 or an unknown tenant waits for
 *   wake('user').
 * - Cursor: advanced by `cursor` frames (sent after each burst) and heartbeat answers; optionally
 *   persisted through a CursorStore so a restarted app resumes where it stopped. Only values in
 *   the cursor format are taken (from the relay and from the store); a hello the relay refuses
 *   (4400) before `ready` drops the cursor, so the next hello starts live instead of being refused
 *   for ever.
 * Event frames are handed on untouched, as text, to onFrame listeners.
 */
import { Backoff, STREAM_BACKOFF } from '../backoff.ts';
import type { Clock, TimerHandle } from '../../../src-shared/clock.ts';
import { Emitter } from '../../../src-shared/emitter.ts';
import { Generation } from '../generation.ts';
import { silentLogger, type Logger } from '../../../src-shared/log.ts';
import type {
  ConnectionStatus,
  EventSource,
  StreamSourceDeps,
  WakeReason,
} from '../events/contracts.ts';
import { HeartbeatWatch } from '../events/heartbeat-watch.ts';
import {
  handshakeRejection,
  type CreateSocket,
  type HandshakeRejection,
  type SocketConnection,
} from '../net/socket.ts';
import { faultStatus, saidStatus, StatusHolder } from '../events/status.ts';
import { phrase } from '../../../src-shared/i18n/phrase.ts';
import {
  describeErrcode,
  describeError,
  ERRCODE,
  ServiceError,
  type FaultId,
} from '../../../src-shared/service-errors.ts';
import { networkFault } from '../net/net-errors.ts';
import {
  CloseCode,
  decodeControl,
  isCursor,
  RELAY_ERRCODE,
  relayClientPath,
  sanitiseFilter,
  type RelayFilter,
  type RelayIdentity,
} from '../../../src-shared/relay-protocol.ts';
import type { CursorStore } from './cursor-store.ts';
import { isLoopbackHost } from '../../../src-shared/loopback.ts';
import { LatestWriter } from '../../../src-shared/one-at-a-time.ts';

export interface RelaySourceDeps extends StreamSourceDeps {
  /** The relay's address: https://relay.example.org (or wss://...); http/ws only for loopback. */
  relayUrl: string;
  tenant: string;
  filter: RelayFilter;
  cursorStore?: CursorStore;
  /** A socket that has not opened, or (while replaying) has been silent, this long is abandoned. */
  connectTimeoutMs?: number;
  /** How long the status stays degraded after a gap notice. */
  gapStatusMs?: number;
  /**
   * Organisation mode: the relay says whose session this is (`ready`'s identity): the user's
   * extensions and numbers, which the relay enforces and the pipeline then matches on.
   */
  onIdentity?: (identity: RelayIdentity) => void;
}

/** Organisation mode's refusals (docs/relay-protocol.md 2.2, 2.3): a person must act. */
function signInStatus(fault: FaultId): ConnectionStatus {
  return faultStatus(
    'needs-attention',
    describeError(new ServiceError({ kind: 'sign-in', fault, message: fault })),
  );
}

/** ws(s) URL of a tenant's stream on the relay; refuses plain text to anything but loopback. */
export function relayStreamUrl(relayUrl: string, tenant: string): string {
  const url = new URL(relayUrl);
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol !== 'wss:' && !(url.protocol === 'ws:' && loopback))
    throw new Error('the relay address must use https (wss) unless it is on this computer');
  url.pathname = url.pathname.replace(/\/+$/, '') + relayClientPath(tenant);
  url.search = '';
  url.hash = '';
  return url.toString();
}

/**
 * An https (http for loopback) address on the relay for a path: enrolment and sign-in requests go
 * to the same relay, under the same rule, as the stream.
 */
export function relayHttpUrl(relayUrl: string, path: string): string {
  const url = new URL(relayStreamUrl(relayUrl, 'x'));
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  url.pathname = url.pathname.replace(/\/v1\/stream\/x$/, '') + path;
  return url.toString();
}

export class RelayEventSource implements EventSource {
  readonly name: string;
  private readonly deps: RelaySourceDeps;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly createSocket: CreateSocket;
  private readonly url: string;
  private readonly backoff: Backoff;
  private readonly heartbeatMs: number;
  private readonly filter: RelayFilter;
  private readonly frames: Emitter<[text: string, receivedAt: number]>;
  private readonly current: StatusHolder;
  private running = false;
  private attention = false;
  /** Bumped on every connect and on stop, so late callbacks of an old socket are ignored. */
  private readonly generation = new Generation();
  private socket: SocketConnection | undefined;
  private token: string | undefined;
  private phase: 'idle' | 'connecting' | 'open' | 'ready' = 'idle';
  private cursor: string | null = null;
  private cursorLoaded: Promise<void> | undefined;
  /** Liveness of the socket by what arrives; a new one when it opens. */
  private watch: HeartbeatWatch | undefined;
  private retryTimer: TimerHandle | undefined;
  private connectTimer: TimerHandle | undefined;
  private heartbeatTimer: TimerHandle | undefined;
  private stableTimer: TimerHandle | undefined;
  private gapTimer: TimerHandle | undefined;
  private gapStatus: ConnectionStatus | undefined;
  private savedCursor: string | null = null;
  private readonly saver: LatestWriter;
  private rejectedOnce = false;

  constructor(deps: RelaySourceDeps) {
    this.deps = deps;
    this.name = deps.name ?? 'relay';
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'relay-source' });
    this.createSocket = deps.createSocket;
    this.url = relayStreamUrl(deps.relayUrl, deps.tenant);
    this.heartbeatMs = deps.heartbeatMs ?? 25_000;
    this.backoff = new Backoff({ ...STREAM_BACKOFF, ...deps.backoff }, deps.random);
    this.frames = new Emitter(this.logger, 'frame');
    this.current = new StatusHolder(this.logger);
    const { filter, dropped } = sanitiseFilter(deps.filter);
    if (dropped > 0)
      this.logger.warn('filter entries the relay would refuse were left out', { dropped });
    this.filter = filter;
    this.saver = new LatestWriter(() => this.saveCursor(), this.logger, 'relay cursor not saved');
  }

  /** The last position this source processed (for tests and diagnostics). */
  get position(): string | null {
    return this.cursor;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attention = false;
    this.cursorLoaded ??= (this.deps.cursorStore?.load() ?? Promise.resolve(null)).then(
      (c) => {
        const valid = typeof c === 'string' && isCursor(c) ? c : null;
        if (c !== null && valid === null)
          this.logger.warn('stored relay cursor is not a cursor; starting live');
        this.cursor ??= valid;
        this.savedCursor = valid;
      },
      (err: Error) =>
        this.logger.warn('relay cursor not loaded; starting live', { err: err.message }),
    );
    void this.connect();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.generation.bump();
    this.clearTimers();
    this.socket?.close(1000, 'stopping');
    this.socket = undefined;
    this.phase = 'idle';
    await this.persistCursor();
    this.setStatus(saidStatus('offline', [phrase('status.stopped')]));
  }

  wake(reason: WakeReason): void {
    if (!this.running) return;
    if (reason === 'user') this.attention = false;
    if (this.attention) return;
    this.logger.info('wake', { reason, phase: this.phase });
    // After sleep or a network change the socket is probably dead; a new one resumes from the
    // cursor, so replacing it costs nothing and finds out at once.
    if (this.phase === 'ready' || this.phase === 'open') this.drop('woken');
    else if (this.phase === 'idle') this.reconnectIn(0);
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

  private async connect(): Promise<void> {
    if (!this.running || this.attention || this.phase !== 'idle') return;
    this.generation.bump();
    const live = this.generation.ticket();
    this.phase = 'connecting';
    if (this.current.get().state !== 'degraded' || !this.gapStatus)
      this.setStatus(saidStatus('connecting', [phrase('status.connecting-relay')]));
    await this.cursorLoaded;
    let token: string;
    try {
      token = (await this.deps.tokens.getToken()).value;
    } catch (error) {
      if (!live()) return;
      this.phase = 'idle';
      const fault = describeError(error);
      if (fault.needsUser) return this.needAttention(faultStatus('needs-attention', fault));
      this.setStatus(faultStatus('offline', fault));
      return this.reconnectIn(this.backoff.next());
    }
    if (!live() || !this.running) return;
    this.token = token;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${token}`,
      'User-Agent': this.deps.userAgent ?? 'Screenpop',
    };
    let rejection: HandshakeRejection | undefined;
    let failure: ServiceError | undefined;
    this.socket = this.createSocket(this.url, headers, {
      open: () => {
        if (!live()) return;
        this.phase = 'open';
        this.watch = new HeartbeatWatch(this.clock, this.heartbeatMs);
        this.socket?.send(
          JSON.stringify({ type: 'hello', v: 1, filter: this.filter, cursor: this.cursor }),
        );
        this.scheduleHeartbeat(live);
      },
      message: (text) => {
        if (!live()) return;
        this.watch?.heard();
        if (this.phase !== 'ready') this.armConnectTimer(live); // replay in progress
        this.onMessage(text);
      },
      rejected: (status, body) => {
        if (live()) rejection = handshakeRejection(status, body);
      },
      error: (error) => {
        if (!live()) return;
        failure = networkFault(error, this.url, 'relay') ?? failure;
        this.logger.debug('relay socket error', { error: error.message });
      },
      closed: (code, reason) => {
        if (live()) this.onClosed(code, reason, rejection, failure);
      },
    });
    this.armConnectTimer(live);
  }

  /**
   * A connection attempt to an address that swallows packets would otherwise wait for the OS
   * (minutes); a relay that accepted the socket but never says `ready` would hold us too.
   */
  private armConnectTimer(live: () => boolean): void {
    this.clock.clearTimeout(this.connectTimer);
    this.connectTimer = this.clock.setTimeout(() => {
      if (!live() || this.phase === 'ready') return;
      this.logger.warn('relay connection not ready in time; abandoning it', { phase: this.phase });
      this.socket?.terminate(); // its `closed` follows, and with it the back-off
    }, this.deps.connectTimeoutMs ?? 15_000);
  }

  private onMessage(text: string): void {
    const control = decodeControl(text);
    if (!control) {
      this.frames.emit(text, this.clock.now());
      return;
    }
    switch (control.type) {
      case 'ready':
        this.phase = 'ready';
        this.clock.clearTimeout(this.connectTimer);
        this.rejectedOnce = false;
        if (control.cursor !== null) this.advance(control.cursor);
        if (control.identity) this.deps.onIdentity?.(control.identity);
        this.setStatus(this.gapStatus ?? { state: 'connected' });
        this.clock.clearTimeout(this.stableTimer);
        this.stableTimer = this.clock.setTimeout(
          () => this.backoff.reset(),
          this.deps.stableMs ?? 30_000,
        );
        break;
      case 'cursor':
        this.advance(control.cursor);
        break;
      case 'heartbeat':
        if (control.cursor !== undefined) this.advance(control.cursor);
        break;
      case 'gap':
        this.logger.warn('relay gap notice', {
          requested: control.requested,
          oldest: control.oldest,
        });
        this.gapStatus = saidStatus('degraded', [phrase('status.relay-gap')]);
        this.setStatus(this.gapStatus);
        this.clock.clearTimeout(this.gapTimer);
        this.gapTimer = this.clock.setTimeout(
          () => {
            this.gapStatus = undefined;
            if (this.phase === 'ready') this.setStatus({ state: 'connected' });
          },
          this.deps.gapStatusMs ?? 5 * 60_000,
        );
        break;
      case 'error':
        this.logger.warn('relay reported an error', { code: control.code });
        break;
    }
  }

  /** Takes a position the relay gave; anything not in the cursor format is ignored (and logged). */
  private advance(cursor: unknown): void {
    if (typeof cursor !== 'string' || !isCursor(cursor)) {
      this.logger.warn('relay sent a position that is not a cursor; ignored');
      return;
    }
    this.cursor = cursor;
    void this.persistCursor();
  }

  /** Saves the cursor when a store is configured; one write at a time, the latest value wins. */
  private persistCursor(): Promise<void> {
    return this.deps.cursorStore ? this.saver.write() : Promise.resolve();
  }

  private async saveCursor(): Promise<void> {
    const c = this.cursor;
    if (c === null || c === this.savedCursor || !this.deps.cursorStore) return;
    await this.deps.cursorStore.save(c);
    this.savedCursor = c;
  }

  private onClosed(
    code: number,
    reason: string,
    rejection: HandshakeRejection | undefined,
    failure?: ServiceError,
  ): void {
    const wasReady = this.phase === 'ready';
    this.socket = undefined;
    this.phase = 'idle';
    this.clock.clearTimeout(this.connectTimer);
    this.clock.clearTimeout(this.heartbeatTimer);
    this.clock.clearTimeout(this.stableTimer);
    if (!this.running) return;
    if (rejection) return this.onRejected(rejection);
    if (failure) {
      // A proxy or certificate fault, named: needs a person, or (an unreachable proxy) the back-off.
      const fault = describeError(failure);
      this.logger.warn('relay socket failed', { fault: fault.fault, error: failure.message });
      if (fault.needsUser) return this.needAttention(faultStatus('needs-attention', fault));
      this.setStatus(faultStatus('offline', fault));
      return this.reconnectIn(this.backoff.next());
    }
    this.logger.info('relay socket closed', { code });
    if (code === CloseCode.revoked) return this.needAttention(signInStatus('access-revoked'));
    if (code === CloseCode.reauthenticate) {
      // At once after a session that lasted (the back-off was reset); counted, so that a relay
      // closing every session at once gets a growing wait instead of a reconnect loop.
      const fresh = this.backoff.attempts === 0;
      const wait = this.backoff.next();
      return this.reconnectIn(fresh ? 0 : wait);
    }
    if (code === CloseCode.badRequest && !wasReady && /cursor/i.test(reason) && this.cursor) {
      // The relay refused the cursor in our hello: it would refuse every hello that carries it.
      this.logger.warn('the relay refused the hello; resuming without a cursor (starting live)');
      this.cursor = null;
    }
    this.setStatus(saidStatus('offline', [phrase('status.relay-dropped')]));
    // 1012: the relay restarts; everyone reconnects, so spread them (jitter) but start small.
    this.reconnectIn(this.backoff.next());
  }

  private onRejected(rejection: HandshakeRejection): void {
    const { status, errcode } = rejection;
    this.logger.warn('relay refused the connection', { status, errcode });
    if (errcode === RELAY_ERRCODE.revoked)
      return this.needAttention(signInStatus('access-revoked'));
    if (errcode === RELAY_ERRCODE.notMapped) return this.needAttention(signInStatus('not-mapped'));
    if (errcode === RELAY_ERRCODE.signInRequired && this.rejectedOnce)
      // Refused again with a credential just renewed (or a device the relay no longer knows).
      return this.needAttention(
        signInStatus(this.token?.startsWith('sprd_') ? 'not-enrolled' : 'sign-in-expired'),
      );
    if ((status === 401 || errcode === ERRCODE.tokenExpired) && this.token) {
      this.deps.tokens.invalidate(this.token);
      if (!this.rejectedOnce) {
        this.rejectedOnce = true;
        return this.reconnectIn(0);
      }
    }
    if (status === 403) {
      const fault = describeErrcode(errcode ?? ERRCODE.insufficientScope);
      return this.needAttention(faultStatus('needs-attention', fault));
    }
    if (status === 404)
      return this.needAttention(
        saidStatus(
          'needs-attention',
          [phrase('status.relay-no-tenant')],
          [phrase('status.relay-no-tenant-remedy')],
        ),
      );
    this.setStatus(
      saidStatus('offline', [phrase('status.relay-refused', { status: String(status) })]),
    );
    this.reconnectIn(this.backoff.next());
  }

  private needAttention(status: ConnectionStatus): void {
    this.attention = true;
    this.setStatus(status);
  }

  private reconnectIn(ms: number): void {
    this.clock.clearTimeout(this.retryTimer);
    if (!this.running) return;
    this.retryTimer = this.clock.setTimeout(() => void this.connect(), ms);
  }

  /**
   * The dead-socket check every half interval (HeartbeatWatch), and a heartbeat with each check:
   * the relay answers every one (with its cursor), which is what the watch hears while no event
   * comes.
   */
  private scheduleHeartbeat(live: () => boolean): void {
    this.heartbeatTimer = this.clock.setTimeout(() => {
      if (!live() || !this.socket) return;
      if (this.watch?.silent()) {
        this.logger.warn('relay socket silent; replacing it');
        this.drop('silent');
        return;
      }
      this.socket.send(JSON.stringify({ type: 'heartbeat' }));
      this.scheduleHeartbeat(live);
    }, this.heartbeatMs / 2);
  }

  /** Abandons the current socket (without waiting for its close) and connects again at once. */
  private drop(why: string): void {
    this.generation.bump();
    this.socket?.terminate();
    this.socket = undefined;
    this.phase = 'idle';
    this.clock.clearTimeout(this.heartbeatTimer);
    this.clock.clearTimeout(this.stableTimer);
    this.logger.info('relay reconnecting', { why });
    this.setStatus(
      saidStatus('connecting', [
        phrase(why === 'silent' ? 'status.relay-went-silent' : 'status.relay-reconnecting'),
      ]),
    );
    this.reconnectIn(0);
  }

  private clearTimers(): void {
    for (const t of [
      this.retryTimer,
      this.connectTimer,
      this.heartbeatTimer,
      this.stableTimer,
      this.gapTimer,
    ])
      this.clock.clearTimeout(t);
  }

  private setStatus(status: ConnectionStatus): void {
    this.current.set(status);
  }
}
