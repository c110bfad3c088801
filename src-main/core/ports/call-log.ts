/**
 * Logging calls into the CRM (issue 39): one finished call, as the core decided it, handed to the
 * durable log queue (which writes it to HubSpot or the generic HTTPS connector exactly once, across
 * retries and restarts). The call model (what a call is, its one outcome) and the note card hand
 * records over through `CallLogSink`; the queue implements it. Types only.
 */
import type { CallOutcome } from '../../../src-shared/ui/call-outcome.ts';

export type CallDirection = 'inbound' | 'outbound';

/** One call to log: no field is a secret; `note` and the numbers are personal data (masked in diagnostics). */
export interface CallLogRecord {
  /** The phone system's id of the call: the idempotency key everywhere. */
  callId: string;
  direction: CallDirection;
  /** Caller and callee numbers as the phone system gave them (validated). */
  from: string;
  to: string;
  /** The user's extension that took (or missed) the call. */
  extension: string;
  /** Wall-clock ms. */
  startedAt: number;
  answeredAt?: number;
  endedAt: number;
  /** Talk time in ms (0 when not answered). */
  durationMs: number;
  outcome: CallOutcome | 'voicemail' | 'declined';
  /** The CRM contact the lookup found, if any (the connector's id). */
  contactId?: string;
  /** The agent's note (plain text, at most 2,000 characters) and chosen outcome label. */
  note?: string;
  disposition?: string;
}

export interface CallLogSink {
  /**
   * Queues a call to log; resolves once it is durably queued (on disk). Logging the same callId
   * again updates the logged call (a note added later), never creates a second one.
   */
  log(record: CallLogRecord): Promise<void>;
}
