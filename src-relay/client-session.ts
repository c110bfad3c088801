import type { WebSocket } from 'ws';
import type { Logger } from '../src-shared/process/log.ts';
import type {
  ControlFrame,
  RelayFilter,
  RelayIdentity,
} from '../src-shared/relay/relay-protocol.ts';
import {
  CloseCode,
  compareCursors,
  encodeControl,
  NumberSet,
  parseClientMessage,
} from '../src-shared/relay/relay-protocol.ts';
import type { ClientOptions } from './config.ts';
import type { FanoutKeys } from './fanout.ts';
import type { RelayMetrics } from './metrics.ts';
import type { ReplayPages } from './replay-pages.ts';
import type { BudgetHolder, SendBudget } from './send-budget.ts';
import type { EventStore, StoredEvent } from './store/types.ts';
import { ADDRESSED_OPT_IN_CODES, PARTY_CODES, TENANT_WIDE_CODES, callerOf } from './envelope.ts';
import { CALL_STATE_CHANGED } from '../src-shared/wire/event-codes.ts';
import { socketOf, textFrameOf, writeAll, type FrameCache } from './ws-frames.ts';
import { TokenBucket } from './token-bucket.ts';

export interface SessionDeps {
  store: EventStore;
  metrics: RelayMetrics;
  logger: Logger;
  options: ClientOptions;
  budget: SendBudget;
  /** Frames of recent events, shared by all sessions. */
  frames: FrameCache;
  /** Replay pages, read from the store once for all sessions resuming from the same place. */
  replayPages: ReplayPages;
  now: () => number;
  /** Monotonic ms, for idle and age limits (a wall-clock step must not close every client). */
  monotonic: () => number;
  /** Called once, when the session turns live: the fan-out indexes it by its filter from then on. */
  onLive: (session: ClientSession, keys: FanoutKeys) => void;
  /** The newest cursor the tenant's fan-out has offered (a live session has all it wanted up to it). */
  tenantPosition: () => string | null;
  /**
   * Organisation mode: the user this session belongs to. Their extensions and numbers are the
   * filter (the hello's are ignored), and only events addressed to them, or tenant-wide ones, pass.
   */
  identity?: RelayIdentity;
  /** SHA-256 of the credential that opened it (to re-check a device after a change to its user). */
  credentialHash?: string;
  /**
   * Monotonic ms at which the session's authorisation ends (closed 4002 then); default
   * `authMaxAgeMs` after it opened. An OpenID sign-in ends `authMaxAgeMs` after its token was issued.
   */
  authDeadline?: number;
}

/**
 * Bytes for a batch of events framed once for every session that gets all of them (the event
 * frames and the `cursor` frame after them), and each event's own frame for the others.
 */
export interface FramedBatch {
  events: readonly StoredEvent[];
  /** Frames of all `events`, then a `cursor` frame with the last one's cursor. */
  whole(): Buffer;
}

const EMPTY = Buffer.alloc(0);

/** How long a closed client has to read what is queued and the close frame before it is cut. */
const CLOSE_GRACE_MS = 5_000;

/** A replay is written in pieces of about this size (each one only when there is room for it). */
const REPLAY_WRITE_BYTES = 32 * 1024;

/** Frames a client may send in a burst; the rate after it is `maxFramesPerMinute`. */
const FRAME_BURST = 20;

/**
 * One connected desktop: waits for its hello, replays what it missed since its cursor (with a gap
 * notice when retention dropped some), then forwards live events that pass its filter. Events are
 * sent as the stored body text (the webhook's original bytes); a `cursor` control frame follows
 * each write of events so the client always knows where to resume.
 *
 * Bounded on every side: a client may send `maxFramesPerMinute` frames (hello first, then
 * heartbeats); everything sent to it, replies included, goes through one check of its unsent bytes
 * (`maxBufferedBytes`) and of all clients' together (SendBudget); a client that is not reading is
 * dropped (4008) and resumes from its cursor.
 */
export class ClientSession implements BudgetHolder {
  readonly tenant: string;
  readonly id: string;
  /** Monotonic ms. */
  readonly openedAt: number;
  /** Monotonic ms of the last frame from the client. */
  lastHeard: number;
  /** Monotonic ms at which the authorisation ends (the sweeper closes the session with 4002). */
  readonly authDeadline: number;
  /** Organisation mode: whose session this is. */
  readonly identity: RelayIdentity | undefined;
  readonly credentialHash: string;
  reportedUnsent = 0;
  private state: 'awaiting-hello' | 'replaying' | 'live' | 'closed' = 'awaiting-hello';
  private filter: {
    extensions: Set<string>;
    numbers: NumberSet;
    /** Codes delivered for the whole tenant. */
    events: Set<number>;
    /**
     * Codes delivered when addressed to this user (calls always): organisation mode's grant, or
     * the client's calls and call records; null: calls only.
     */
    own: Set<number> | null;
  } = {
    extensions: new Set(),
    numbers: new NumberSet([]),
    events: new Set(),
    own: null,
  };
  /** The newest cursor sent (or skipped past) on this socket. */
  private position: string | null = null;
  private pending: StoredEvent[] = [];
  /** Set once the live feed has overtaken any replay: positions need no more checking. */
  private inOrder = false;
  /** Frames this client may still send: FRAME_BURST at once, maxFramesPerMinute refilled. */
  private readonly frames: TokenBucket;

  private readonly ws: WebSocket;
  private readonly deps: SessionDeps;

  constructor(ws: WebSocket, tenant: string, id: string, deps: SessionDeps) {
    this.ws = ws;
    this.deps = deps;
    this.tenant = tenant;
    this.id = id;
    this.openedAt = deps.monotonic();
    this.lastHeard = this.openedAt;
    this.identity = deps.identity;
    this.credentialHash = deps.credentialHash ?? '';
    this.authDeadline = deps.authDeadline ?? this.openedAt + deps.options.authMaxAgeMs;
    this.frames = new TokenBucket(FRAME_BURST, deps.options.maxFramesPerMinute, deps.monotonic);
    ws.on('message', (data, isBinary) => this.onMessage(isBinary ? null : data.toString()));
  }

  /** Events the store published for this session's tenant (in order), framed once for all. */
  offer(batch: FramedBatch, events: readonly StoredEvent[]): void {
    if (this.state === 'replaying') {
      for (const e of events) this.pending.push(e);
      return;
    }
    if (this.state !== 'live') return;
    if (this.inOrder && events.length === batch.events.length && this.wantsAll(events)) {
      // The common case: every event of the batch, in order: the shared bytes as they are.
      // (Hot: once per client per batch; it allocates nothing of its own.)
      if (!this.roomFor()) return;
      this.position = events[events.length - 1]!.cursor;
      this.write(batch.whole(), events[0]!);
      this.deps.metrics.delivered += events.length;
      return;
    }
    this.deliver(events, false);
  }

  close(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.deps.metrics.clientClosed(code);
    this.deps.budget.report(this, 0);
    this.ws.close(code, reason);
    // The close frame queues behind what the client has not read: a client that is not reading
    // would hold that memory until ws's 30 s close time-out. Cut it sooner.
    const ws = this.ws;
    setTimeout(
      () => {
        if (ws.readyState !== ws.CLOSED) ws.terminate();
      },
      // A client that broke the protocol gets less time than one that was merely slow.
      code === CloseCode.badRequest ? 1_000 : CLOSE_GRACE_MS,
    ).unref();
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  unsentBytes(): number {
    return this.state === 'closed' ? 0 : this.ws.bufferedAmount;
  }

  /**
   * Where this client may resume from. Once live, the fan-out offers a session only the events it
   * may want, so its own position lags on events for others; everything up to the tenant's last
   * offered cursor has been sent to it if it wanted it.
   *
   * Organisation mode gives a user their own position only: the tenant's would tell them when
   * colleagues' calls arrive (issue 33 item 5). The cost: a reconnect replays from the user's last
   * event or connection (the others' events in between are read and left out), and a session that
   * stays up longer than the retention (24 h by default) without an event of its user's is told of
   * a gap on its next reconnect.
   */
  private resumePosition(): string | null {
    const tenant = this.state === 'live' && !this.identity ? this.deps.tenantPosition() : null;
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
    this.deps.budget.report(this, 0);
  }

  private onMessage(text: string | null): void {
    if (this.state === 'closed') return;
    const now = this.deps.monotonic();
    this.lastHeard = now;
    // A desktop sends a hello and a heartbeat every 25 s; a flood (each heartbeat asks for a
    // reply) is a protocol violation.
    if (!this.frames.take()) return this.close(CloseCode.badRequest, 'too many frames');
    if (text === null)
      return this.close(CloseCode.badRequest, 'binary frames are not part of the protocol');
    const msg = parseClientMessage(text);
    if ('error' in msg) return this.close(CloseCode.badRequest, msg.error);
    if (this.state === 'awaiting-hello' && msg.type !== 'hello')
      return this.close(CloseCode.badRequest, 'hello must be the first frame');
    if (msg.type === 'heartbeat') {
      const cursor = this.resumePosition();
      this.sendControl(cursor ? { type: 'heartbeat', cursor } : { type: 'heartbeat' });
      return;
    }
    if (this.state !== 'awaiting-hello')
      return this.close(CloseCode.badRequest, 'hello sent twice');
    this.setFilter(msg.filter);
    this.state = 'replaying';
    this.start(msg.cursor).catch((err: Error) => {
      this.deps.logger.warn('client start failed', { session: this.id, error: err });
      this.close(CloseCode.tryAgainLater, 'storage unavailable');
    });
  }

  private setFilter(f: RelayFilter): void {
    const id = this.identity;
    if (!id) {
      // The client's word: its opt-in codes for the whole tenant, but a call record only of its
      // own calls (ADDRESSED_OPT_IN_CODES), as a call.
      const addressed = f.events.filter((code) => ADDRESSED_OPT_IN_CODES.has(code));
      this.filter = {
        extensions: new Set(f.extensions),
        numbers: new NumberSet(f.dids),
        events: new Set(f.events.filter((code) => !ADDRESSED_OPT_IN_CODES.has(code))),
        own: addressed.length > 0 ? new Set([CALL_STATE_CHANGED, ...addressed]) : null,
      };
      return;
    }
    // Organisation mode: the relay's grant, not the client's word. The hello only narrows which
    // kinds of events it wants (a feature turned off); calls to the user are always sent.
    this.filter = {
      extensions: new Set(id.extensions),
      numbers: new NumberSet(id.dids, { exactOnly: true }),
      events: new Set(f.events.filter((code) => TENANT_WIDE_CODES.has(code))),
      own: new Set([CALL_STATE_CHANGED, ...f.events.filter((code) => PARTY_CODES.has(code))]),
    };
  }

  private wantsAll(events: readonly StoredEvent[]): boolean {
    for (const e of events) if (!this.wants(e)) return false;
    return true;
  }

  private wants(event: StoredEvent): boolean {
    const { filter } = this;
    if (filter.events.has(event.event)) return true;
    if (event.to === null) return false;
    if (filter.own === null ? event.event !== CALL_STATE_CHANGED : !filter.own.has(event.event))
      return false;
    if (filter.extensions.has(event.to)) return true;
    if (filter.numbers.size > 0 && filter.numbers.has(event.to)) return true;
    // A call record of a call this user's extension made (an outbound call: their call log).
    const caller = callerOf(event);
    return caller !== null && filter.extensions.has(caller);
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
      this.sendControl({
        type: 'gap',
        requested: cursor,
        oldest: null,
        reason: 'cursor unknown to this relay; starting from now',
      });
      cursor = null;
    }
    if (cursor === null) {
      this.position = latest;
    } else {
      this.position = cursor;
      let first = true;
      // A backlog can be far larger than the send buffer: the replay goes out in writes of at
      // most REPLAY_WRITE_BYTES, each only when this socket and the budget of all sockets
      // together have room. A client that must wait holds no page of events meanwhile (it reads
      // on from its position afterwards), so hundreds of clients replaying at once without
      // reading hold the budget, not their backlogs.
      const mustWait = () => {
        const unsent = this.ws.bufferedAmount;
        return unsent > options.maxBufferedBytes / 2 || !this.deps.budget.allows(unsent);
      };
      // After a wait, read about as much as the socket took last time rather than a full page.
      let pageSize = options.replayBatch;
      for (;;) {
        if (mustWait()) await this.drained();
        if (this.isClosed) return;
        const page = await this.deps.replayPages.read(this.tenant, this.position, pageSize);
        if (this.isClosed) return;
        if (first && page.gap) {
          metrics.gaps += 1;
          this.sendControl({
            type: 'gap',
            requested: cursor,
            oldest: page.gap.oldest,
            reason: 'cursor is older than what the relay retains; events may have been missed',
          });
        }
        first = false;
        let from = 0;
        while (from < page.events.length && !(from > 0 && mustWait())) {
          let to = from;
          let bytes = 0;
          while (to < page.events.length && (to === from || bytes < REPLAY_WRITE_BYTES))
            bytes += page.events[to++]!.body.length;
          this.deliver(page.events.slice(from, to), true);
          if (this.isClosed) return;
          from = to;
        }
        if (from === page.events.length && page.events.length < pageSize) break;
        pageSize = from === page.events.length ? options.replayBatch : Math.max(16, from);
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
    this.sendControl({
      type: 'ready',
      session: this.id,
      cursor: this.position,
      heartbeatMs: options.heartbeatMs,
      idleTimeoutMs: options.idleTimeoutMs,
      ...(this.identity ? { identity: this.identity } : {}),
    });
    this.deliver(buffered, false);
  }

  /**
   * Sends the events this client wants and has not had, in one write followed by one `cursor`
   * frame. Events reach a session in cursor order, except where a replay and the live feed
   * overlap (right after the hello): positions are compared until a live event has moved past
   * them; from then on the feed is strictly increasing and the comparison (hot) is skipped.
   */
  private deliver(events: readonly StoredEvent[], replay: boolean): void {
    const chosen: StoredEvent[] = [];
    for (const event of events) {
      if (!this.inOrder) {
        if (this.position !== null && compareCursors(event.cursor, this.position) <= 0) continue;
        if (!replay && this.state === 'live') this.inOrder = true;
      }
      this.position = event.cursor;
      if (this.wants(event)) chosen.push(event);
    }
    if (chosen.length === 0 || !this.roomFor()) return;
    const { frames } = this.deps;
    const last = chosen[chosen.length - 1]!.cursor;
    this.write(
      [
        ...chosen.map((e) => frames.frame(frameKey(e), e.body)),
        textFrameOf(encodeControl({ type: 'cursor', cursor: last })),
      ],
      replay ? undefined : chosen[0],
    );
    this.deps.metrics.delivered += chosen.length;
    if (replay) this.deps.metrics.replayed += chosen.length;
  }

  /** False (and the client dropped, to resume later) when it cannot take more now. */
  private roomFor(): boolean {
    const unsent = this.ws.bufferedAmount;
    if (unsent > this.deps.options.maxBufferedBytes || !this.deps.budget.allows(unsent)) {
      this.close(CloseCode.slowConsumer, 'client too slow; resume from your cursor');
      return false;
    }
    return true;
  }

  /**
   * Writes bytes out; for live events, `oldest` is the event that waited longest, and its lag is
   * recorded when the bytes have left the process for the client's socket (not when they were
   * queued): at once when the kernel took them all, else when the queue ahead has been flushed.
   * (A callback on every write would cost more than the write itself at a thousand clients.)
   */
  private write(bytes: Buffer | readonly Buffer[], oldest?: StoredEvent): void {
    const socket = socketOf(this.ws);
    if (!socket || this.state === 'closed') return;
    const { metrics, budget } = this.deps;
    if (!oldest) writeAll(socket, bytes);
    else if (socket.writableLength > 0) {
      // Queued behind earlier bytes: the lag is known once the queue ahead has been flushed.
      const receivedAt = oldest.receivedAt;
      writeAll(socket, bytes, (err) => {
        if (!err) metrics.observeLag(this.deps.now() - receivedAt);
      });
    } else {
      writeAll(socket, bytes);
      if (socket.writableLength === 0) metrics.observeLag(this.deps.now() - oldest.receivedAt);
      else {
        const receivedAt = oldest.receivedAt;
        socket.write(EMPTY, (err) => {
          if (!err) metrics.observeLag(this.deps.now() - receivedAt);
        });
      }
    }
    budget.report(this, this.ws.bufferedAmount);
  }

  private sendControl(frame: ControlFrame): void {
    if (this.state === 'closed' || !this.roomFor()) return;
    this.write(textFrameOf(encodeControl(frame)));
  }

  /**
   * Resolves once the socket has written most of its buffer out (and the budget has room), or
   * closed. Waits for the socket's `drain` (checked at least every 250 ms, so hundreds of
   * replaying clients cost a few wake-ups each, not a poll every few ms). A client that takes
   * more than a minute is dropped (4008); it resumes from its cursor.
   */
  private async drained(): Promise<void> {
    const target = this.deps.options.maxBufferedBytes / 4;
    const deadline = this.deps.monotonic() + 60_000;
    for (;;) {
      const socket = socketOf(this.ws);
      if (this.isClosed || !socket) return;
      const unsent = this.ws.bufferedAmount;
      this.deps.budget.report(this, unsent);
      if (unsent <= target && this.deps.budget.allows(unsent)) return;
      if (this.deps.monotonic() > deadline)
        return this.close(CloseCode.slowConsumer, 'client too slow; resume from your cursor');
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        const timer = setTimeout(done, 250);
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }
}

/** An event's name in the frame cache: its tenant and position. */
function frameKey(e: StoredEvent): string {
  return `${e.tenant} ${e.cursor}`;
}

/** A batch whose frames (all events, then a cursor frame) are put together once, on first use. */
export function framedBatch(events: readonly StoredEvent[], frames: FrameCache): FramedBatch {
  let whole: Buffer | undefined;
  return {
    events,
    whole() {
      whole ??= Buffer.concat([
        ...events.map((e) => frames.frame(frameKey(e), e.body)),
        textFrameOf(encodeControl({ type: 'cursor', cursor: events[events.length - 1]!.cursor })),
      ]);
      return whole;
    },
  };
}
