/**
 * THE rule of what is sent for a call (issue 39): the one builder of a `CallLogRecord` from what
 * the app knows of the call. The popup's note card and the History fallback (call-presenter.ts)
 * and the runner (src-main/headless/call-logging.ts) all build their records here, so the same
 * call gives the same record whichever path logs it.
 *
 * - `startedAt` is this computer's clock when the ring arrived (the card's `startedAt`; a server
 *   timestamp may be in another clock's frame), `endedAt` the hang-up of an answered call, else
 *   the end of the ring.
 * - The duration is talk time, only for an answered call: the phone system's record of the
 *   user's leg when it said (Yeastar's 30012 `talk_duration`), else from the answer to the end;
 *   0 for every other outcome.
 * - `answeredAt` only for an answered call; the note and the disposition only when there is one.
 * - Inbound calls: the user's extension is the number that rang (`to`); outbound calls (the
 *   agent dialled): the extension that dialled (`from`).
 */
import type { CallDirection, CallLogRecord } from '../ports/call-log.ts';
import type { CallOutcome } from '../../../src-shared/ui/call-outcome.ts';

/** What a path knows of one finished call. */
export interface CallLogFacts {
  callId: string;
  direction: CallDirection;
  from: string;
  to: string;
  /** Wall-clock ms: the ring's arrival here, the answer here, the end. */
  startedAt: number;
  answeredAt?: number | undefined;
  endedAt: number;
  /** Seconds talked, from the phone system's record of the call, where it said. */
  talkSec?: number | undefined;
  outcome: CallOutcome;
  note?: string | null | undefined;
  disposition?: string | null | undefined;
  contactId?: string | null | undefined;
}

export function callLogRecord(f: CallLogFacts): CallLogRecord {
  const answered = f.outcome === 'answered';
  const answeredAt = answered ? f.answeredAt : undefined;
  const durationMs = !answered
    ? 0
    : f.talkSec !== undefined
      ? f.talkSec * 1000
      : answeredAt !== undefined
        ? Math.max(0, f.endedAt - answeredAt)
        : 0;
  return {
    callId: f.callId,
    direction: f.direction,
    from: f.from,
    to: f.to,
    extension: f.direction === 'outbound' ? f.from : f.to,
    startedAt: f.startedAt,
    ...(answeredAt !== undefined ? { answeredAt } : {}),
    endedAt: f.endedAt,
    durationMs,
    outcome: f.outcome,
    ...(f.contactId ? { contactId: f.contactId } : {}),
    ...(f.note ? { note: f.note } : {}),
    ...(f.disposition ? { disposition: f.disposition } : {}),
  };
}
