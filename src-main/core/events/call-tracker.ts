/**
 * Decides, per call_id, when a 30011 event pops and when it dismisses.
 *
 * - Only `ringing` whose `to` is one of the user's extensions or DIDs can pop, once per call.
 * - Any other state is "no longer ringing there" (protocol.md section 2, the list of states is open):
 *   it dismisses a popped call if it is not older than the ring that popped it.
 * - "Later" means by the server's timestamp, not by arrival: a `ringing` stamped at or before a
 *   non-ringing state already seen for the same call never pops (states out of order, a duplicate
 *   that outlived the dedupe window); a ring stamped after it (e.g. a transfer back) pops again.
 * - A ring older than `staleRingMs` (judged by the caller on the offset-corrected clock) never pops.
 *
 * Every call of the tenant is remembered (that is what catches a late ring to us after a colleague
 * answered), so memory is bounded: at most `maxCalls` records, each forgotten `ttlMs` after its
 * last event (least recently touched first).
 */
import type { CallStateData, Envelope } from './envelope.ts';
import type { UserNumberMatcher } from './numbers.ts';

export interface CallTrackerOptions {
  maxCalls?: number;
  ttlMs?: number;
  staleRingMs?: number;
}

interface CallRecord {
  /** Latest server timestamp of a non-ringing state seen for this call. */
  lastNotRinging: number;
  /** The ring that popped, while its popup is up. */
  popped?: { timestamp: number; to: string };
  touchedAt: number;
}

export type CallDecision =
  | { kind: 'pop' }
  | { kind: 'dismiss' }
  | { kind: 'ignored'; why: 'not-for-user' | 'already-popped' | 'late' | 'stale' | 'not-popped' };

export class CallTracker {
  private readonly calls = new Map<string, CallRecord>();
  private readonly maxCalls: number;
  private readonly ttlMs: number;
  readonly staleRingMs: number;

  constructor(options: CallTrackerOptions = {}) {
    this.maxCalls = Math.max(1, options.maxCalls ?? 20_000);
    this.ttlMs = options.ttlMs ?? 60 * 60 * 1000;
    this.staleRingMs = options.staleRingMs ?? 45_000;
  }

  /**
   * One call-state event. `ageMs` is how old the event is on the corrected clock; `nowMonotonic`
   * drives the memory bound.
   */
  handle(
    envelope: Envelope,
    call: CallStateData,
    matcher: UserNumberMatcher,
    ageMs: number,
    nowMonotonic: number,
  ): CallDecision {
    this.expire(nowMonotonic);
    if (call.state === 'ringing') {
      if (!matcher.matches(call.to)) return { kind: 'ignored', why: 'not-for-user' };
      const record = this.touch(call.call_id, nowMonotonic);
      if (envelope.timestamp <= record.lastNotRinging) return { kind: 'ignored', why: 'late' };
      if (record.popped) return { kind: 'ignored', why: 'already-popped' };
      if (ageMs > this.staleRingMs) return { kind: 'ignored', why: 'stale' };
      record.popped = { timestamp: envelope.timestamp, to: call.to };
      return { kind: 'pop' };
    }
    const record = this.touch(call.call_id, nowMonotonic);
    record.lastNotRinging = Math.max(record.lastNotRinging, envelope.timestamp);
    if (!record.popped || envelope.timestamp < record.popped.timestamp)
      return { kind: 'ignored', why: 'not-popped' };
    record.popped = undefined;
    return { kind: 'dismiss' };
  }

  get size(): number {
    return this.calls.size;
  }

  private touch(callId: string, nowMonotonic: number): CallRecord {
    let record = this.calls.get(callId);
    if (record) this.calls.delete(callId);
    else record = { lastNotRinging: -Infinity, touchedAt: nowMonotonic };
    record.touchedAt = nowMonotonic;
    this.calls.set(callId, record);
    if (this.calls.size > this.maxCalls) {
      const oldest = this.calls.keys().next();
      if (!oldest.done) this.calls.delete(oldest.value);
    }
    return record;
  }

  private expire(nowMonotonic: number): void {
    const cutoff = nowMonotonic - this.ttlMs;
    for (const [id, record] of this.calls) {
      if (record.touchedAt >= cutoff) break;
      this.calls.delete(id);
    }
  }
}
