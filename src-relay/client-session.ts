import type { WebSocket } from 'ws';
import type { Logger } from '../src-main/core/log.ts';
import type { RelayFilter } from '../src-main/core/relay-client/protocol.ts';
import {
  CloseCode,
  compareCursors,
  encodeControl,
  NumberSet,
  parseClientMessage,
} from '../src-main/core/relay-client/protocol.ts';
import type { ClientOptions } from './config.ts';
import type { RelayMetrics } from './metrics.ts';
import type { FanoutKeys } from './fanout.ts';
import type { EventStore, StoredEvent } from './store/types.ts';

export interface SessionDeps {
  store: EventStore;
  metrics: RelayMetrics;
  logger: Logger;
  options: ClientOptions;
  now: () => number;
  /** Monotonic ms, for idle and age limits (a wall-clock step must not close every client). */
  monotonic: () => number;
  /** Called once, when the session turns live: the fan-out indexes it by its filter from then on. */
  onLive: (session: ClientSession, keys: FanoutKeys) => void;
  /** The newest cursor the tenant's fan-out has offered (a live session has all it wanted up to it). */
  tenantPosition: () => string | null;
}

/**
 * One connected desktop: waits for its hello, replays what it missed since its cursor (with a gap
 * notice when retention dropped some), then forwards live events that pass its filter. Events are
 * sent as the stored body text (the webhook's original bytes); a `cursor` control frame follows
 * each burst so the client always knows where to resume.
 */
export class ClientSession {
  readonly tenant: string;
  readonly id: string;
  /** Monotonic ms. */
  readonly openedAt: number;
  /** Monotonic ms of the last frame from the client. */
  lastHeard: number;
  private state: 'awaiting-hello' | 'replaying' | 'live' | 'closed' = 'awaiting-hello';
  private filter: { extensions: Set<string>; numbers: NumberSet; events: Set<number> } = {
    extensions: new Set(),
    numbers: new NumberSet([]),
    events: new Set(),
  };
  /** The newest cursor sent (or skipped past) on this socket. */
  private position: string | null = null;
  private pending: StoredEvent[] = [];
  private cursorFlushQueued = false;
  /** Set once the live feed has overtaken any replay: positions need no more checking. */
  private inOrder = false;
  private unsentCursor: string | null = null;

  private readonly ws: WebSocket;
  private readonly deps: SessionDeps;

  constructor(ws: WebSocket, tenant: string, id: string, deps: SessionDeps) {
    this.ws = ws;
    this.deps = deps;
    this.tenant = tenant;
    this.id = id;
    this.openedAt = deps.monotonic();
    this.lastHeard = this.openedAt;
    ws.on('message', (data, isBinary) => this.onMessage(isBinary ? null : data.toString()));
  }

  /** Called for every event the store publishes for this session's tenant. */
  offer(event: StoredEvent): void {
    if (this.state === 'replaying') {
      this.pending.push(event);
      return;
    }
    if (this.state !== 'live') return;
    this.deliver(event, false);
  }

  close(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.deps.metrics.clientClosed(code);
    this.ws.close(code, reason);
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /**
   * Where this client may resume from. Once live, the fan-out offers a session only the events it
   * may want, so its own position lags on events for others; everything up to the tenant's last
   * offered cursor has been sent to it if it wanted it.
   */
  private resumePosition(): string | null {
    const tenant = this.state === 'live' ? this.deps.tenantPosition() : null;
    if (tenant === null) return this.position;
    if (this.position === null) return tenant;
    return compareCursors(tenant, this.position) > 0 ? tenant : this.position;
  }

  /** Closes a socket that has not said hello within `timeoutMs` of opening. */
  checkHello(now: number, timeoutMs: number): void {
    if (this.state === 'awaiting-hello' && now - this.openedAt > timeoutMs)
      this.close(CloseCode.badRequest, 'no hello');
  }

  markClosed(): void {
    this.state = 'closed';
  }

  private onMessage(text: string | null): void {
    this.lastHeard = this.deps.monotonic();
    if (text === null)
      return this.close(CloseCode.badRequest, 'binary frames are not part of the protocol');
    const msg = parseClientMessage(text);
    if ('error' in msg) return this.close(CloseCode.badRequest, msg.error);
    if (msg.type === 'heartbeat') {
      const cursor = this.resumePosition();
      this.send(encodeControl(cursor ? { type: 'heartbeat', cursor } : { type: 'heartbeat' }));
      return;
    }
    if (this.state !== 'awaiting-hello')
      return this.close(CloseCode.badRequest, 'hello sent twice');
    this.setFilter(msg.filter);
    this.state = 'replaying';
    this.start(msg.cursor).catch((err: Error) => {
      this.deps.logger.warn('client start failed', { session: this.id, err: err.message });
      this.close(CloseCode.tryAgainLater, 'storage unavailable');
    });
  }

  private setFilter(f: RelayFilter): void {
    this.filter = {
      extensions: new Set(f.extensions),
      numbers: new NumberSet(f.dids),
      events: new Set(f.events),
    };
  }

  private wants(event: StoredEvent): boolean {
    if (this.filter.events.has(event.event)) return true;
    if (event.event !== 30011 || event.to === null) return false;
    if (this.filter.extensions.has(event.to)) return true;
    return this.filter.numbers.size > 0 && this.filter.numbers.has(event.to);
  }

  /** Replay from `cursor` (or take the live position), then switch to live. */
  private async start(cursor: string | null): Promise<void> {
    const { store, options, metrics } = this.deps;
    const latest = await store.latest(this.tenant);
    if (cursor !== null && compareCursors(cursor, latest) > 0) {
      // A position past everything stored: this relay never handed it out (another deployment, a
      // wiped store, a clock that stepped back), or everything since aged out. Waiting for ids to
      // pass it would deliver nothing, so start live and say that events may have been missed.
      metrics.gaps += 1;
      this.send(
        encodeControl({
          type: 'gap',
          requested: cursor,
          oldest: null,
          reason: 'cursor unknown to this relay; starting from now',
        }),
      );
      cursor = null;
    }
    if (cursor === null) {
      this.position = latest;
    } else {
      this.position = cursor;
      let first = true;
      for (;;) {
        const page = await store.readAfter(this.tenant, this.position, options.replayBatch);
        if (this.isClosed) return;
        if (first && page.gap) {
          metrics.gaps += 1;
          this.send(
            encodeControl({
              type: 'gap',
              requested: cursor,
              oldest: page.gap.oldest,
              reason: 'cursor is older than what the relay retains; events may have been missed',
            }),
          );
        }
        first = false;
        for (const e of page.events) {
          this.deliver(e, true);
          // A backlog can be far larger than the send buffer: pace the replay by the socket.
          if (this.ws.bufferedAmount > options.maxBufferedBytes / 2) await this.drained();
          if (this.isClosed) return;
        }
        if (page.events.length < options.replayBatch) break;
      }
    }
    if (this.isClosed) return;
    const buffered = this.pending;
    this.pending = [];
    this.state = 'live';
    this.deps.onLive(this, {
      extensions: [...this.filter.extensions],
      events: [...this.filter.events],
      hasNumbers: this.filter.numbers.size > 0,
    });
    this.send(
      encodeControl({
        type: 'ready',
        session: this.id,
        cursor: this.position,
        heartbeatMs: options.heartbeatMs,
        idleTimeoutMs: options.idleTimeoutMs,
      }),
    );
    for (const e of buffered) this.deliver(e, false);
  }

  private deliver(event: StoredEvent, replay: boolean): void {
    // Events reach a session in cursor order, except where a replay and the live feed overlap
    // (right after the hello). Compare until one live event has moved past the position; from
    // then on the feed is strictly increasing and the comparison (hot: per event per client) is skipped.
    if (!this.inOrder) {
      if (this.position !== null && compareCursors(event.cursor, this.position) <= 0) return; // already sent
      if (!replay && this.state === 'live') this.inOrder = true;
    }
    this.position = event.cursor;
    if (!this.wants(event)) return;
    if (this.ws.bufferedAmount > this.deps.options.maxBufferedBytes) {
      this.close(CloseCode.slowConsumer, 'client too slow; resume from your cursor');
      return;
    }
    this.startBurst();
    this.send(event.body);
    this.deps.metrics.delivered += 1;
    if (replay) this.deps.metrics.replayed += 1;
    else this.deps.metrics.observeLag(this.deps.now() - event.receivedAt);
    this.unsentCursor = event.cursor;
  }

  /**
   * Frames sent in one turn of the event loop (a live event, a page of replay) are corked and
   * leave in one write, followed by a single `cursor` frame for the burst.
   */
  private startBurst(): void {
    if (this.cursorFlushQueued) return;
    this.cursorFlushQueued = true;
    const socket = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    socket?.cork();
    process.nextTick(() => {
      this.cursorFlushQueued = false;
      if (this.unsentCursor && !this.isClosed)
        this.send(encodeControl({ type: 'cursor', cursor: this.unsentCursor }));
      this.unsentCursor = null;
      socket?.uncork();
    });
  }

  /**
   * Resolves once the socket has written most of its buffer out, or closed. Polled: a corked
   * socket does not always arm `drain`. A client that takes more than a minute is dropped (4008);
   * it resumes from its cursor.
   */
  private async drained(): Promise<void> {
    const target = this.deps.options.maxBufferedBytes / 4;
    const deadline = performance.now() + 60_000;
    while (
      !this.isClosed &&
      this.ws.readyState === this.ws.OPEN &&
      this.ws.bufferedAmount > target
    ) {
      if (performance.now() > deadline)
        return this.close(CloseCode.slowConsumer, 'client too slow; resume from your cursor');
      await new Promise<void>((r) => setTimeout(r, 5));
    }
  }

  private send(text: string): void {
    if (this.state === 'closed' || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(text);
  }
}
