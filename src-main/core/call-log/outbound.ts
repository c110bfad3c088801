/**
 * Calls the agent dialled, logged (issue 39), once each, as OUTBOUND, when the phone system's
 * record of the call arrives (Yeastar's 30012 New CDR: its status and talk time):
 * - a call dialled from Screenpop (the popup's Call back, the dial box, a call link, the runner's
 *   `dial`: core/events/own-dials.ts says which rings are the user's own), by its first record;
 * - a call dialled on the user's own phone: a record whose `type` is Outbound and whose
 *   `call_from` is one of the user's numbers (captured: captured-30012-D2-outbound-busy.json).
 * The tray app (call-presenter.ts) and the runner (headless/call-logging.ts) both log outbound
 * calls through this class.
 *
 * The outcome is the one rule's (callOutcomeOf) from the record's status: ANSWERED is `answered`
 * with the record's talk time, NO ANSWER is `missed` (nobody took it: HubSpot NO_ANSWER), BUSY is
 * `declined` (HubSpot BUSY), FAILED ended some other way. Which are logged is the same setting's
 * (shouldLogCall): `answered` logs the outbound calls the callee answered, `answered-and-missed`
 * also those nobody answered (docs/crm/hubspot.md, docs/crm/call-log-webhook.md).
 *
 * Bounded: at most MAX_DIALLED calls remembered, each OWN_CALL_TTL_MS; a call whose record never
 * comes (a phone system that sends none) is not logged.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';
import { callOutcomeOf } from '../../../src-shared/ui/call-outcome.ts';
import { shouldLogCall, type CallLogCalls } from '../../../src-shared/rules/call-log-rule.ts';
import { recordState } from '../../../src-shared/phone-systems/yeastar-p-series.ts';
import type { CallRecord, OwnCall } from '../events/pipeline.ts';
import { OWN_CALL_TTL_MS, MAX_OWN_CALLS } from '../events/own-dials.ts';
import type { CallLogSink } from '../ports/call-log.ts';
import { callLogRecord } from './record.ts';

/** Outbound calls remembered as logged: a few hours of a busy agent's calls. */
const MAX_LOGGED = 2_000;

export interface OutboundCallLogDeps {
  clock: Clock;
  /** Where calls are logged; absent: nothing is. */
  sink: CallLogSink | undefined;
  /** The call-log setting in force; absent: none. */
  calls: () => CallLogCalls | undefined;
  /** A call could not be queued (the queue refused it: full, closed). */
  onError: (error: unknown, callId: string) => void;
  /** True when `number` is one of the user's own (extensions): who dialled a record's call. */
  isUserNumber: (number: string) => boolean;
}

export class OutboundCallLog {
  private readonly d: OutboundCallLogDeps;
  private readonly dialled: BoundedFifoMap<OwnCall>;
  /** Outbound calls already logged (a call may get a record per segment): once each. */
  private readonly logged: BoundedFifoMap<true>;

  constructor(deps: OutboundCallLogDeps) {
    this.d = deps;
    this.dialled = new BoundedFifoMap<OwnCall>(MAX_OWN_CALLS, OWN_CALL_TTL_MS);
    this.logged = new BoundedFifoMap<true>(MAX_LOGGED, OWN_CALL_TTL_MS);
  }

  /** A ring of a call the user dialled (pipeline.onOwnCall): remembered until its record. */
  own(call: OwnCall): void {
    if (!this.d.sink || (this.d.calls() ?? 'none') === 'none') return;
    const now = this.d.clock.now();
    if (!this.dialled.has(call.callId, now)) this.dialled.set(call.callId, call, now);
  }

  /** A call's record (pipeline.onRecord): a dialled call's first one logs it, once. */
  record(record: CallRecord): void {
    const now = this.d.clock.now();
    if (this.logged.has(record.callId, now)) return;
    // The first record of a call dialled from Screenpop decides (the agent's leg or the callee's:
    // the same call); else an Outbound record of a call one of the user's phones made.
    const call =
      this.dialled.get(record.callId, now) ??
      (record.direction === 'outbound' && record.from && this.d.isUserNumber(record.from)
        ? {
            callId: record.callId,
            number: record.to,
            extension: record.from,
            startedAt: now - (record.durationSec ?? record.talkSec ?? 0) * 1000,
          }
        : undefined);
    if (!call) return;
    this.dialled.delete(record.callId);
    this.logged.set(record.callId, true, now);
    const state = recordState(record.status);
    const outcome = callOutcomeOf(state === 'answered' ? 'here' : null, state);
    const calls = this.d.calls();
    const sink = this.d.sink;
    if (!sink || !calls || !shouldLogCall(calls, outcome)) return;
    const talkSec = outcome === 'answered' ? (record.talkSec ?? 0) : undefined;
    sink
      .log(
        callLogRecord({
          callId: call.callId,
          direction: 'outbound',
          from: call.extension ?? '',
          to: call.number,
          startedAt: call.startedAt ?? now,
          ...(talkSec !== undefined ? { answeredAt: now - talkSec * 1000, talkSec } : {}),
          endedAt: now,
          outcome,
        }),
      )
      .catch((error: unknown) => this.d.onError(error, call.callId));
  }
}
