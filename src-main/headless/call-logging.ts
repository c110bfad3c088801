/**
 * The runner's call logging (issue 39, --crm-log): the durable queue (core/call-log/queue.ts) in
 * its folder, and what the runner logs. Until the call model of issue 39 (the call's one outcome,
 * its duration) reaches the runner, a call is logged from what the runner sees: its pop (caller,
 * line, ring time) and its dismiss: `answered` on one of the runner's extensions is an answered
 * call (talk time not yet known: 0), any other end of a call that rang here without being
 * answered is a missed one (logged with `answered-and-missed`); a call answered on another
 * extension (a colleague) is never logged by this runner. Each call is logged once: the queue
 * keys it by the phone system's call id.
 */
import type { Clock } from '../../src-shared/process/clock.ts';
import { BoundedFifoMap } from '../../src-shared/kit/bounded-map.ts';
import type { Pop, Dismiss } from '../core/events/pipeline.ts';
import type { CallLogRecord, CallLogSink } from '../core/ports/call-log.ts';
import type { CallLoggedEvent } from '../core/call-log/queue.ts';
import type { CrmLogMode } from './args.ts';
import type { LoggedLine } from './output.ts';

/** Rings remembered until their end, at most (a ring's end comes within minutes). */
const RINGS = 2_000;
const RING_TTL_MS = 4 * 60 * 60_000;

export function loggedLine(crm: 'hubspot' | 'generic', e: CallLoggedEvent): LoggedLine {
  return {
    type: 'logged',
    call_id: e.callId,
    crm,
    crm_id: e.crmId,
    how: e.how,
    attempts: e.attempts,
  };
}

export class RunnerCallLog {
  private readonly rings: BoundedFifoMap<Pop>;
  private readonly done: BoundedFifoMap<true>;

  private readonly mode: CrmLogMode;
  private readonly extensions: readonly string[];
  private readonly sink: CallLogSink;
  private readonly clock: Clock;
  private readonly onError: (error: unknown) => void;

  constructor(
    mode: CrmLogMode,
    extensions: readonly string[],
    sink: CallLogSink,
    clock: Clock,
    onError: (error: unknown) => void,
  ) {
    this.mode = mode;
    this.extensions = extensions;
    this.sink = sink;
    this.clock = clock;
    this.onError = onError;
    this.rings = new BoundedFifoMap<Pop>(RINGS, RING_TTL_MS);
    this.done = new BoundedFifoMap<true>(RINGS, RING_TTL_MS);
  }

  pop(p: Pop): void {
    if (this.mode === 'none') return;
    this.rings.set(p.callId, p, this.clock.now());
  }

  dismiss(d: Dismiss): void {
    if (this.mode === 'none') return;
    const now = this.clock.now();
    const ring = this.rings.get(d.callId, now);
    if (!ring || this.done.has(d.callId, now)) return;
    const answered = d.state === 'answered';
    const mine = this.extensions.length === 0 || this.extensions.includes(d.to);
    if (answered && !mine) return; // a colleague took it: theirs to log
    if (!answered && this.mode !== 'answered-and-missed') return;
    this.done.set(d.callId, true, now);
    const record: CallLogRecord = {
      callId: d.callId,
      direction: 'inbound',
      from: ring.from,
      to: ring.to,
      extension: answered ? d.to : ring.to,
      startedAt: ring.timestamp,
      ...(answered ? { answeredAt: now } : {}),
      endedAt: now,
      durationMs: 0,
      outcome: answered ? 'answered' : 'missed',
    };
    this.sink.log(record).catch(this.onError);
  }
}
