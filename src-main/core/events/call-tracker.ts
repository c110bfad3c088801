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
 * Memory is bounded. The non-ringing timestamp of every call of the tenant is remembered (that is
 * what catches a late ring to us after a colleague answered) for at most `maxCalls` calls and
 * `ttlMs`, first-seen first out; the window this must cover is only the stale-ring limit (a later
 * ring older than that never pops anyway): 50,000 calls is ~100 s at 500 calls/s. Popped calls
 * (the user's own, few) are kept apart, at most 1,000 for an hour, so tenant traffic cannot push
 * out a popup's record before its dismiss arrives.
 */
import { BoundedFifoMap } from './bounded-map.ts';
import type { CallStateData, Envelope } from './envelope.ts';
import type { UserNumberMatcher } from './numbers.ts';

export interface CallTrackerOptions {
  maxCalls?: number;
  ttlMs?: number;
  staleRingMs?: number;
}

export type CallDecision =
  | { kind: 'pop' }
  | { kind: 'dismiss' }
  | { kind: 'ignored'; why: 'not-for-user' | 'already-popped' | 'late' | 'stale' | 'not-popped' };

export class CallTracker {
  /** call_id -> latest server timestamp of a non-ringing state. */
  private readonly notRinging: BoundedFifoMap<number>;
  /** call_id -> server timestamp of the ring that popped, while its popup is up. */
  private readonly popped: BoundedFifoMap<number>;
  readonly staleRingMs: number;

  constructor(options: CallTrackerOptions = {}) {
    const ttlMs = options.ttlMs ?? 60 * 60 * 1000;
    this.notRinging = new BoundedFifoMap(options.maxCalls ?? 50_000, ttlMs);
    this.popped = new BoundedFifoMap(1_000, ttlMs);
    this.staleRingMs = options.staleRingMs ?? 45_000;
  }

  /**
   * One call-state event. `ageMs` tells how old the event is on the corrected clock (asked only for
   * a ring to the user: estimating it sorts the recent offset samples); `nowMonotonic` drives the
   * memory bound.
   */
  handle(
    envelope: Envelope,
    call: CallStateData,
    matcher: UserNumberMatcher,
    ageMs: () => number,
    nowMonotonic: number,
  ): CallDecision {
    const id = call.call_id;
    if (call.state === 'ringing') {
      if (!matcher.matches(call.to)) return { kind: 'ignored', why: 'not-for-user' };
      const last = this.notRinging.get(id, nowMonotonic);
      if (last !== undefined && envelope.timestamp <= last) return { kind: 'ignored', why: 'late' };
      if (this.popped.has(id, nowMonotonic)) return { kind: 'ignored', why: 'already-popped' };
      if (ageMs() > this.staleRingMs) return { kind: 'ignored', why: 'stale' };
      this.popped.set(id, envelope.timestamp, nowMonotonic);
      return { kind: 'pop' };
    }
    const last = this.notRinging.get(id, nowMonotonic);
    this.notRinging.set(id, Math.max(last ?? -Infinity, envelope.timestamp), nowMonotonic);
    const popped = this.popped.get(id, nowMonotonic);
    if (popped === undefined || envelope.timestamp < popped)
      return { kind: 'ignored', why: 'not-popped' };
    this.popped.delete(id);
    return { kind: 'dismiss' };
  }

  /** Calls remembered (both kinds). */
  get size(): number {
    return this.notRinging.size + this.popped.size;
  }
}
