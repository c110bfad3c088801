/**
 * From frames to calls. Every source (direct WebSocket, webhook relay, tests) feeds raw frame text
 * into `ingest`, the single merge point; then, once per frame: decode it into the core's envelopes
 * at the boundary (the source's wire format: `attach(source, decode)`, the standard one by
 * default), and per envelope dedupe on event_id, sample the server/desktop clock offset, hand the
 * envelope to `onEvent` listeners, and for 30011 let the call tracker decide pop / dismiss. An
 * envelope stamped on receipt (a wire without time) is fresh by construction and no clock sample.
 *
 * Nothing a frame contains can throw out of `ingest`: malformed and oversized frames are counted and
 * logged (reason, size and source only; frame text is caller data and never logged), and a
 * listener that throws is logged and does not stop the others.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import { silentLogger, type Logger } from '../../../src-shared/process/log.ts';
import { CallTracker, DEFAULT_STALE_RING_MS } from './call-tracker.ts';
import { ClockOffsetEstimator } from './clock-offset.ts';
import type { EventSource } from './contracts.ts';
import { DedupeSet, type DedupeOptions } from './dedupe.ts';
import { CALL_RECORD } from '../../../src-shared/wire/event-codes.ts';
import {
  CALL_STATE_CHANGED,
  MAX_CALL_FIELD_CHARS,
  callStateData,
  decodeStandardFrame,
  type CallStateData,
  type Envelope,
  type FrameDecoder,
  type RejectReason,
} from '../../../src-shared/wire/envelope.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { UserNumberMatcher, type UserNumbers } from './numbers.ts';
import { NoticeTracker, type Notice } from './notices.ts';
import { OwnDials, type DialTicket, type OwnCall } from './own-dials.ts';

export type { Envelope } from '../../../src-shared/wire/envelope.ts';
export type { UserNumbers } from './numbers.ts';
export type { Notice } from './notices.ts';
export type { DialTicket, OwnCall } from './own-dials.ts';

export interface Pop {
  callId: string;
  /** The caller ID: untrusted, at most 256 code points (see fromTruncated). */
  from: string;
  /** Present when the caller ID was longer and `from` is only its start (say so when showing it). */
  fromTruncated?: true;
  to: string;
  /**
   * The inbound line as the phone system reports it: the number dialled (a DID) or the trunk;
   * on a Yeastar P-Series PBX the inbound `to`, which may be the extension the PBX routed the
   * call to rather than the DID (docs/phone-systems/yeastar-p-series.md section 3).
   */
  line?: string;
  /** The extension that transferred the call to this ring (`from` stays the original caller). */
  transferredBy?: string;
  /**
   * Yeastar P-Series: the ringing member's raw `call_path` (the IVR, queue or ring group numbers
   * the call came through), untrusted, at most 256 characters; the directory names the group.
   */
  callPath?: string;
  /** The phone system never reported who called (a Yeastar trunk without Call Status Monitor). */
  callerUnseen?: true;
  eventId: string;
  /** Server timestamp of the ring, ms since the epoch. */
  timestamp: number;
  /** Local wall-clock time the frame arrived, as the source reported it. */
  receivedAt: number;
  /** Name of the source whose copy arrived first. */
  source: string;
}

/** A call's record once it ended (CALL_RECORD, a phone system's CDR): History's talk time. */
export interface CallRecord {
  callId: string;
  /** The callee the record is about. */
  to: string;
  /** The phone system's word for how it went (Yeastar: ANSWERED, NO ANSWER, BUSY, VOICEMAIL...). */
  status: string;
  /** Seconds talked, where the record says (0 to 86,400). */
  talkSec?: number;
  /** Seconds from the start of the call to its end, where the record says (0 to 86,400). */
  durationSec?: number;
  /** Who made the call (Yeastar's `call_from`), where the record says. */
  from?: string;
  /** The record's direction (Yeastar's `type`): an outbound call of the user's is theirs to log. */
  direction?: 'inbound' | 'outbound' | 'internal';
}

export interface Dismiss {
  callId: string;
  state: string;
  eventId: string;
  to: string;
}

export interface PipelineStats {
  frames: number;
  events: number;
  duplicates: number;
  rejected: Record<RejectReason | 'bad-call-data' | 'bad-notice-data', number>;
  pops: number;
  /** Voicemail, SMS, trunk and presence notices raised (notify false included). */
  notices: number;
  /** Voicemail and SMS older than the stale limit: history, not notifications. */
  staleNotices: number;
  dismisses: number;
  /** Rings of calls the user dialled from Screenpop: not popped (own-dials.ts). */
  ownCalls: number;
  staleRings: number;
  lateRings: number;
  dedupeSize: number;
  callsTracked: number;
  /**
   * How far the desktop's wall clock is ahead of the server's, as estimated (the fastest transport
   * delay included); null before the first sample.
   */
  clockOffsetMs: number | null;
}

export interface PipelineDeps {
  clock: Clock;
  logger?: Logger;
  user: UserNumbers;
  /** A ring older than this (on the offset-corrected clock) never pops. Default 45 s. */
  staleRingMs?: number;
  dedupe?: DedupeOptions;
  calls?: { maxCalls?: number; ttlMs?: number };
  /** A voicemail or SMS older than this is history, not a notification. Default 1 hour. */
  staleNoticeMs?: number;
  /**
   * Called when the wall clock jumped against the monotonic clock (sleep, or the time was changed):
   * the offset samples were shifted by the jump, provisionally, and a fresh server-clock reference
   * is wanted (noteServerTime).
   */
  onClockJump?: () => void;
}

/** A CALL_RECORD's data, or undefined when a field does not fit (call_id and to bounded). */
function callRecordOf(data: Record<string, unknown>): CallRecord | undefined {
  const { call_id: callId, to, status, talk_sec: talk, duration_sec: duration, from } = data;
  const ok = (v: unknown, max: number): v is string =>
    typeof v === 'string' && v.length > 0 && v.length <= max;
  if (!ok(callId, MAX_CALL_FIELD_CHARS) || !ok(to, MAX_CALL_FIELD_CHARS)) return undefined;
  const secs = (v: unknown) =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 86_400 ? v : undefined;
  const talkSec = secs(talk);
  const durationSec = secs(duration);
  const direction = data.direction;
  return {
    callId,
    to,
    status: typeof status === 'string' ? status.slice(0, 64) : '',
    ...(talkSec !== undefined ? { talkSec } : {}),
    ...(durationSec !== undefined ? { durationSec } : {}),
    ...(ok(from, MAX_CALL_FIELD_CHARS) ? { from } : {}),
    ...(direction === 'inbound' || direction === 'outbound' || direction === 'internal'
      ? { direction }
      : {}),
  };
}

/** A wall-vs-monotonic jump larger than this between two events means sleep or a clock change. */
const CLOCK_JUMP_MS = 10_000;

/** At most one log line per rejection reason per this interval (a flood must not flood the log). */
const REJECT_LOG_INTERVAL_MS = 10_000;

type Listener<T> = (value: T) => void;

export class EventPipeline {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly dedupe: DedupeSet;
  private readonly offset = new ClockOffsetEstimator();
  private readonly tracker: CallTracker;
  private matcher: UserNumberMatcher;
  private readonly pops: Emitter<[Pop]>;
  private readonly dismisses: Emitter<[Dismiss]>;
  private readonly hangups: Emitter<[Dismiss]>;
  private readonly events: Emitter<[Envelope]>;
  private readonly records: Emitter<[CallRecord]>;
  private readonly notices: Emitter<[Notice]>;
  private readonly ownCalls: Emitter<[OwnCall]>;
  /** The user's own dialled calls: which rings are not pops (own-dials.ts). */
  private readonly ownDials: OwnDials<Pop>;
  private readonly noticeTracker: NoticeTracker;
  private readonly lastRejectLog = new Map<string, number>();
  private readonly onClockJump: (() => void) | undefined;
  /** Wall minus monotonic time at the last event: a change means sleep or a clock change. */
  private lastDrift: number | undefined;
  private readonly counts = {
    frames: 0,
    events: 0,
    duplicates: 0,
    pops: 0,
    dismisses: 0,
    staleRings: 0,
    lateRings: 0,
    notices: 0,
    staleNotices: 0,
    ownCalls: 0,
  };
  private readonly rejected: PipelineStats['rejected'] = {
    oversized: 0,
    'not-json': 0,
    'not-object': 0,
    'bad-field': 0,
    'bad-call-data': 0,
    'bad-notice-data': 0,
  };

  constructor(deps: PipelineDeps) {
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'event-pipeline' });
    this.pops = new Emitter(this.logger, 'pop');
    this.dismisses = new Emitter(this.logger, 'dismiss');
    this.hangups = new Emitter(this.logger, 'hangup');
    this.events = new Emitter(this.logger, 'event');
    this.records = new Emitter(this.logger, 'record');
    this.notices = new Emitter(this.logger, 'notice');
    this.ownCalls = new Emitter(this.logger, 'own-call');
    this.ownDials = new OwnDials<Pop>({
      clock: deps.clock,
      release: (pop) => this.emitPop(pop),
      own: (call, ring) => {
        this.counts.ownCalls++;
        this.ownCalls.emit({ ...call, extension: ring.to, startedAt: ring.receivedAt });
      },
    });
    this.noticeTracker = new NoticeTracker(
      deps.staleNoticeMs !== undefined ? { staleNoticeMs: deps.staleNoticeMs } : {},
    );
    this.dedupe = new DedupeSet(deps.dedupe);
    this.tracker = new CallTracker({
      ...deps.calls,
      staleRingMs: deps.staleRingMs ?? DEFAULT_STALE_RING_MS,
    });
    this.matcher = this.buildMatcher(deps.user);
    this.onClockJump = deps.onClockJump;
  }

  /**
   * The merge point: one raw frame from `meta.source`, received at wall time `meta.receivedAt`, in
   * the wire format `decode` reads (the standard service's by default).
   */
  ingest(
    text: string,
    meta: { source: string; receivedAt: number },
    decode: FrameDecoder = decodeStandardFrame,
  ): void {
    this.counts.frames++;
    const nowMono = this.clock.monotonic();
    const decoded = decode(text, meta.receivedAt, nowMono);
    if (!decoded.ok) {
      this.reject(decoded.reason, meta.source, text.length, decoded.detail);
      return;
    }
    this.checkClockJump(nowMono);
    for (const envelope of decoded.envelopes) this.handle(envelope, meta, nowMono);
  }

  private handle(
    envelope: Envelope,
    meta: { source: string; receivedAt: number },
    nowMono: number,
  ): void {
    if (!this.dedupe.firstSeen(envelope.event_id, nowMono)) {
      this.counts.duplicates++;
      return;
    }
    this.counts.events++;
    const isCall = envelope.event === CALL_STATE_CHANGED;
    if (NoticeTracker.handles(envelope.event)) {
      this.onNoticeEvent(envelope, meta, nowMono);
      return;
    }
    const call = isCall ? callStateData(envelope) : undefined;
    // An event rejected below says nothing trustworthy about the server's clock either; one
    // stamped on receipt says nothing about it at all.
    if ((!isCall || call) && !envelope.receiptStamped) this.offset.add(envelope.timestamp, nowMono);
    this.events.emit(envelope);
    if (envelope.event === CALL_RECORD) {
      const record = callRecordOf(envelope.data);
      if (record) this.records.emit(record);
      return;
    }
    if (!isCall) return;
    if (call) this.onCallState(envelope, call, meta, nowMono);
    else this.reject('bad-call-data', meta.source, 0);
  }

  /**
   * A reading of the server's clock (from an HTTP Date header, see server-clock.ts): `serverMs` is
   * what the server's clock read at local monotonic time `atMonotonic`.
   */
  noteServerTime(serverMs: number, atMonotonic: number): void {
    this.checkClockJump(this.clock.monotonic());
    this.offset.addReference(serverMs, atMonotonic);
  }

  /**
   * Feeds `source`'s frames into `ingest`, decoded by `decode` (its wire format; the standard one
   * by default); returns a function that detaches it.
   */
  attach(source: EventSource, decode: FrameDecoder = decodeStandardFrame): () => void {
    return source.onFrame((text, receivedAt) =>
      this.ingest(text, { source: source.name, receivedAt }, decode),
    );
  }

  /**
   * A dial of `number` from the user's extension is about to be sent: the ring of the call it
   * starts is the user's own, not a pop (own-dials.ts); say on the ticket how the dial ended.
   */
  expectOwnDial(number: string): DialTicket {
    return this.ownDials.begin(number);
  }

  /** Rings of the user's own dialled calls (instead of a pop): "Calling <number>…". */
  onOwnCall(listener: Listener<OwnCall>): () => void {
    return this.ownCalls.on(listener);
  }

  /** Stops the timers of rings held for a dial's answer (the connection is going away). */
  stop(): void {
    this.ownDials.clear();
  }

  onPop(listener: Listener<Pop>): () => void {
    return this.pops.on(listener);
  }

  onDismiss(listener: Listener<Dismiss>): () => void {
    return this.dismisses.on(listener);
  }

  /** A call the user answered ended on the number that answered it (the call's end, for the log). */
  onHangup(listener: Listener<Dismiss>): () => void {
    return this.hangups.on(listener);
  }

  /** Calls' records (CALL_RECORD) as they come, of any callee: the listener picks its own. */
  onRecord(listener: Listener<CallRecord>): () => void {
    return this.records.on(listener);
  }

  /** Voicemail, SMS, trunk-status and presence notices for this user (notices.ts). */
  onNotice(listener: Listener<Notice>): () => void {
    return this.notices.on(listener);
  }

  /** Trunks known to be not registered now. */
  trunksDown(): string[] {
    return this.noticeTracker.trunksDown();
  }

  /** Every unique, valid envelope of any code (data of unknown codes is opaque). */
  onEvent(listener: Listener<Envelope>): () => void {
    return this.events.on(listener);
  }

  setUser(user: UserNumbers): void {
    this.matcher = this.buildMatcher(user);
  }

  stats(): PipelineStats {
    const nowMono = this.clock.monotonic();
    const est = this.offset.estimate(nowMono);
    return {
      ...this.counts,
      rejected: { ...this.rejected },
      dedupeSize: this.dedupe.size,
      callsTracked: this.tracker.size,
      clockOffsetMs: est === undefined ? null : Math.round(this.clock.now() - nowMono + est),
    };
  }

  private onCallState(
    envelope: Envelope,
    call: CallStateData,
    meta: { source: string; receivedAt: number },
    nowMono: number,
  ): void {
    let age = 0;
    // Stamped on receipt: it came live over a socket that never replays (age 0 by construction).
    const ageOf = () =>
      (age = envelope.receiptStamped ? 0 : this.offset.ageOf(envelope.timestamp, nowMono));
    const decision = this.tracker.handle(envelope, call, this.matcher, ageOf, nowMono);
    switch (decision.kind) {
      case 'pop': {
        const pop: Pop = {
          callId: call.call_id,
          from: call.from,
          ...(call.fromTruncated ? { fromTruncated: true as const } : {}),
          to: call.to,
          ...(call.line !== undefined ? { line: call.line } : {}),
          ...(call.transferred_by !== undefined ? { transferredBy: call.transferred_by } : {}),
          ...(call.call_path !== undefined ? { callPath: call.call_path } : {}),
          ...(call.caller_unseen ? { callerUnseen: true as const } : {}),
          eventId: envelope.event_id,
          timestamp: envelope.timestamp,
          receivedAt: meta.receivedAt,
          source: meta.source,
        };
        if (this.ownDials.decide(call.call_id, pop) === 'pop') this.emitPop(pop);
        return;
      }
      case 'dismiss':
        // A ring still held for a dial's answer ended: it was never shown, nothing to dismiss.
        if (this.ownDials.ended(call.call_id)) return;
        this.counts.dismisses++;
        this.dismisses.emit({
          callId: call.call_id,
          state: call.state,
          eventId: envelope.event_id,
          to: call.to,
        });
        return;
      case 'hangup':
        this.hangups.emit({
          callId: call.call_id,
          state: call.state,
          eventId: envelope.event_id,
          to: call.to,
        });
        return;
      case 'ignored':
        if (decision.why === 'stale') {
          this.counts.staleRings++;
          this.logger.info('stale ring not popped', {
            ageMs: Math.round(age),
            staleRingMs: this.tracker.staleRingMs,
          });
        } else if (decision.why === 'late') {
          this.counts.lateRings++;
          this.logger.debug('ring after a later state of its call not popped');
        }
    }
  }

  private emitPop(pop: Pop): void {
    this.counts.pops++;
    this.pops.emit(pop);
  }

  private onNoticeEvent(
    envelope: Envelope,
    meta: { source: string; receivedAt: number },
    nowMono: number,
  ): void {
    // A valid event is a clock sample, taken before its own age is judged (as for rings); a
    // rejected one says nothing trustworthy about the server's clock.
    let sampled = false;
    const sample = () => {
      if (!sampled && !envelope.receiptStamped) this.offset.add(envelope.timestamp, nowMono);
      sampled = true;
    };
    const decision = this.noticeTracker.handle(
      envelope,
      this.matcher,
      () => (
        sample(),
        envelope.receiptStamped ? 0 : this.offset.ageOf(envelope.timestamp, nowMono)
      ),
      nowMono,
      meta,
    );
    if (decision.kind === 'rejected') {
      this.reject('bad-notice-data', meta.source, 0);
      return;
    }
    sample();
    this.events.emit(envelope);
    if (decision.kind === 'ignored') return;
    const notice = decision.notice;
    this.counts.notices++;
    if ((notice.type === 'sms' || notice.type === 'voicemail') && !notice.notify) {
      this.counts.staleNotices++;
      this.logger.info('stale notice kept as history only', { type: notice.type });
    }
    this.notices.emit(notice);
  }

  private checkClockJump(nowMono: number): void {
    const drift = this.clock.now() - nowMono;
    const last = this.lastDrift;
    this.lastDrift = drift;
    if (last === undefined || Math.abs(drift - last) <= CLOCK_JUMP_MS) return;
    this.logger.info(
      'wall clock jumped against the monotonic clock; re-estimating the server offset',
      {
        jumpMs: Math.round(drift - last),
      },
    );
    this.offset.shift(drift - last);
    this.onClockJump?.();
  }

  private buildMatcher(user: UserNumbers): UserNumberMatcher {
    const matcher = new UserNumberMatcher(user);
    if (matcher.rejected.length > 0) {
      this.logger.warn('some extensions or DIDs in the settings are not usable numbers', {
        count: matcher.rejected.length,
      });
    }
    return matcher;
  }

  private reject(
    reason: keyof PipelineStats['rejected'],
    source: string,
    size: number,
    detail?: string,
  ): void {
    this.rejected[reason]++;
    const now = this.clock.monotonic();
    const last = this.lastRejectLog.get(reason);
    if (last !== undefined && now - last < REJECT_LOG_INTERVAL_MS) return;
    this.lastRejectLog.set(reason, now);
    this.logger.warn('frame rejected', {
      reason,
      detail,
      source,
      size,
      totalOfReason: this.rejected[reason],
    });
  }
}
