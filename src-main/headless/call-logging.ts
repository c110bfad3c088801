/**
 * The runner's call logging (issue 39, --crm-log): the durable queue (core/call-log/queue.ts) in
 * its folder, and what the runner logs, by the app's rules: a call's one outcome
 * (src-shared/ui/call-outcome.ts `callOutcomeOf`) and which calls are logged
 * (src-shared/rules/call-log-rule.ts `shouldLogCall`: never a call a colleague answered). A call
 * answered on one of the runner's extensions is logged at its hang-up (pipeline.onHangup) with its
 * talk time; one whose hang-up is never heard of, after MAX_TALK_MS with a talk time of 0. Each
 * call is logged once: the queue keys it by the phone system's call id.
 */
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import { callOutcomeOf } from '../../src-shared/ui/call-outcome.ts';
import { shouldLogCall } from '../../src-shared/rules/call-log-rule.ts';
import { MAX_TALK_MS } from '../core/presenters/call-presenter.ts';
import { BoundedFifoMap } from '../../src-shared/kit/bounded-map.ts';
import type { CallRecord, Dismiss, OwnCall, Pop } from '../core/events/pipeline.ts';
import { OutboundCallLog } from '../core/call-log/outbound.ts';
import type { CallLogRecord, CallLogSink } from '../core/ports/call-log.ts';
import { callLogRecord, type CallLogFacts } from '../core/call-log/record.ts';
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
  /** The CRM contact the lookup found per call (bounded like the rings). */
  private readonly contacts: BoundedFifoMap<string>;
  /** Answered here, waiting for the hang-up (bounded by MAX_TALK_MS each). */
  private readonly talking = new Map<string, { facts: CallLogFacts; timer: TimerHandle }>();

  private readonly mode: CrmLogMode;
  private readonly extensions: readonly string[];
  private readonly sink: CallLogSink;
  private readonly clock: Clock;
  private readonly onError: (error: unknown) => void;
  /** The calls dialled from the runner (`dial`), logged as OUTBOUND when their record comes. */
  private readonly outbound: OutboundCallLog;

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
    this.contacts = new BoundedFifoMap<string>(RINGS, RING_TTL_MS);
    this.outbound = new OutboundCallLog({
      clock,
      sink: mode === 'none' ? undefined : sink,
      calls: () => mode,
      onError,
      isUserNumber: (n) => extensions.includes(n),
    });
  }

  /** The CRM lookup found the caller: its contact id goes with the call's log (HubSpot's association). */
  contact(callId: string, contactId: string): void {
    if (this.mode === 'none') return;
    this.contacts.set(callId, contactId, this.clock.now());
  }

  /** A ring of a call dialled from the runner (pipeline.onOwnCall). */
  own(call: OwnCall): void {
    this.outbound.own(call);
  }

  /** A call's record (pipeline.onRecord): a dialled call is logged from it. */
  record(record: CallRecord): void {
    this.outbound.record(record);
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
    const mine = this.extensions.length === 0 || this.extensions.includes(d.to);
    const answer = d.state === 'answered' ? (mine ? 'here' : 'elsewhere') : null;
    const outcome = callOutcomeOf(answer, d.state);
    if (!shouldLogCall(this.mode, outcome)) return;
    this.done.set(d.callId, true, now);
    const facts: CallLogFacts = {
      callId: d.callId,
      direction: 'inbound',
      from: ring.from,
      to: ring.to,
      // This computer's clock when the ring arrived, as the popup's card has it.
      startedAt: ring.receivedAt,
      ...(answer === 'here' ? { answeredAt: now } : {}),
      endedAt: now,
      outcome,
    };
    if (outcome !== 'answered') {
      void this.log(this.build(facts));
      return;
    }
    // Logged at its hang-up, with its talk time; a hang-up never heard of: after MAX_TALK_MS.
    const timer = this.clock.setTimeout(
      () => void this.hangup({ ...d, state: 'ended' }),
      MAX_TALK_MS,
    );
    this.talking.set(d.callId, { facts, timer });
  }

  /** The user's answered call ended (pipeline.onHangup): logged with its talk time. */
  hangup(h: Dismiss): Promise<void> {
    const call = this.talking.get(h.callId);
    if (!call) return Promise.resolve();
    this.talking.delete(h.callId);
    this.clock.clearTimeout(call.timer);
    return this.log(this.build({ ...call.facts, endedAt: this.clock.now() }));
  }

  /** Stops: calls still being talked are logged as they stand (talk time so far), durably. */
  async stop(): Promise<void> {
    const ended = [...this.talking.keys()].map((callId) =>
      this.hangup({ callId, state: 'ended', eventId: '', to: '' }),
    );
    await Promise.all(ended);
  }

  /** The record, with the contact the CRM lookup found by now (if any). */
  private build(facts: CallLogFacts): CallLogRecord {
    const contactId = this.contacts.get(facts.callId, this.clock.now());
    return callLogRecord({ ...facts, ...(contactId ? { contactId } : {}) });
  }

  private log(record: CallLogRecord): Promise<void> {
    return this.sink.log(record).catch(this.onError);
  }
}
