/**
 * Decides, per call_id, when a 30011 event pops and when it dismisses.
 *
 * - Only `ringing` whose `to` is one of the user's extensions or DIDs can pop, once per call.
 * - Any other state is "no longer ringing there" (docs/wire-protocol.md section 6: the list of states is open):
 *   it dismisses a popped call if it is not older than the ring that popped it.
 * - "Later" means by the server's timestamp, not by arrival: a `ringing` stamped at or before a
 *   non-ringing state already seen for the same call and party never pops (states out of order, a
 *   duplicate that outlived the dedupe window); a ring stamped after it (e.g. a transfer back) pops
 *   again.
 * - Another party's state counts only when it is `answered` ("answered elsewhere"; a colleague's
 *   ring that stops does not stop ours: a ring group's or a desk phone's leg may end alone), and
 *   only when strictly later. Timestamps may be whole seconds, and a
 *   hunt group moves from a colleague's `ended` to the ring on our extension within one second: a
 *   tie there must pop (a missed ring is the worse error), and that colleague's `ended` arriving
 *   after our pop must not dismiss it. A colleague who answered strictly later still dismisses
 *   ("answered elsewhere").
 * - A ring older than `staleRingMs` (judged by the caller on the offset-corrected clock) never pops.
 *
 * Memory is bounded. The non-ringing timestamp of every call of the tenant is remembered (that is
 * what catches a late ring to us after a colleague answered) for at most `maxCalls` calls and
 * `ttlMs`, first-seen first out; the window this must cover is only the stale-ring limit (a later
 * ring older than that never pops anyway). Popped calls (the user's own, few) are kept apart, so
 * tenant traffic cannot push out a popup's record before its dismiss arrives. Sizes below, from
 * their rules; `npm run bench:runner` prints what each costs at full bounds.
 */
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';
import type { CallStateData, Envelope } from '../../../src-shared/wire/envelope.ts';
import type { UserNumberMatcher } from './numbers.ts';

export interface CallTrackerOptions {
  maxCalls?: number;
  ttlMs?: number;
  staleRingMs?: number;
}

export type CallDecision =
  | { kind: 'pop' }
  | { kind: 'dismiss' }
  /** The user's answered call ended (hung up) on the number that answered it. */
  | { kind: 'hangup' }
  | { kind: 'ignored'; why: 'not-for-user' | 'already-popped' | 'late' | 'stale' | 'not-popped' };

/** States in which a party still has the call: answered and talking, or holding it. */
const TALKING = new Set(['answered', 'hold']);

interface PartyTime {
  to: string;
  ts: number;
  /** When this party last answered (`answered`: the call was taken there). */
  answeredTs?: number;
}
type PartyTimes = PartyTime[];

/**
 * The tenant's calls an hour the call memory is sized for: 100,000 (~28 a second: 4,800 busy
 * agents on one tenant, above any single call centre we size for).
 */
const TENANT_CALLS_PER_HOUR = 100_000;

/**
 * Calls of the tenant whose non-ringing state is remembered: those of twice the stale-ring limit
 * (a later ring older than the limit never pops anyway) at TENANT_CALLS_PER_HOUR. The limit is the
 * user's (--stale-ring-sec, 5 s to 1 h), so the bound follows it; the map grows only as calls come
 * (src-shared/kit/bounded-map.ts), so a large bound costs nothing on a quiet tenant.
 */
export function maxTrackedCalls(staleRingMs: number): number {
  return Math.ceil((2 * staleRingMs * TENANT_CALLS_PER_HOUR) / 3_600_000);
}

/**
 * The stale-ring limit when the user sets none (--stale-ring-sec). Its bound,
 * maxTrackedCalls(DEFAULT_STALE_RING_MS), is 2,500 calls. At full bounds, with the popped calls:
 * 14.1 MiB at most (16 parties of 256-character numbers and ids), 1 MiB with ring groups of 3 and
 * 36-character ids. It was 50,000 (100 s at 500 calls/s): ~206 MiB at most, and a 1,000-agent
 * centre's stream plateaued 5.6 MiB higher (20.4 against 14.8 MiB; `npm run bench:runner`, caches
 * part).
 */
export const DEFAULT_STALE_RING_MS = 45_000;

/**
 * The user's own popped calls: every ring of the user's numbers in the hour a record is kept
 * (`ttlMs`). A ring-all queue of 40 busy agents rings each of them 40 x 21 = 840 times an hour (21
 * calls an hour for a busy agent: bench/runner-caches.ts).
 */
export const MAX_POPPED_CALLS = 1_000;

/** The state that says a party took the call (docs/wire-protocol.md section 6). */
const ANSWERED = 'answered';

/** A call rings few parties; more than this (a huge ring group) keeps only the latest states. */
const MAX_PARTIES = 16;

/**
 * Does `state` end `ring`? Same party: any state at or after it. Another party: only its answer,
 * strictly after ("answered elsewhere"); a colleague's leg that stops ringing (declined, timed out,
 * one of a ring group's legs ended) says nothing about ours: the call still rings here.
 */
function supersedes(state: PartyTime, ring: PartyTime): boolean {
  return state.to === ring.to
    ? state.ts >= ring.ts
    : state.answeredTs !== undefined && state.answeredTs > ring.ts;
}

/** `states` with `state` folded in: one latest timestamp per party, bounded. */
function withParty(states: PartyTimes | undefined, state: PartyTime): PartyTimes {
  const others = (states ?? []).filter((s) => s.to !== state.to);
  const previous = states?.find((s) => s.to === state.to);
  const answered = Math.max(previous?.answeredTs ?? -Infinity, state.answeredTs ?? -Infinity);
  const latest: PartyTime = {
    to: state.to,
    ts: Math.max(previous?.ts ?? -Infinity, state.ts),
    ...(answered > -Infinity ? { answeredTs: answered } : {}),
  };
  return [...others, latest].sort((a, b) => b.ts - a.ts).slice(0, MAX_PARTIES);
}

export class CallTracker {
  /** call_id -> latest server timestamp of a non-ringing state, per party (`to`). */
  private readonly notRinging: BoundedFifoMap<PartyTimes>;
  /** call_id -> the ring that popped (its timestamp and party), while its popup is up. */
  private readonly popped: BoundedFifoMap<PartyTime>;
  /**
   * call_id -> the user's number that answered a popped call, until it says the call is over
   * there (its next state that is not answered or hold): the hang-up, the call's end time. As few
   * as the popped calls, kept apart for the same reason.
   */
  private readonly talking: BoundedFifoMap<PartyTime>;
  readonly staleRingMs: number;

  constructor(options: CallTrackerOptions = {}) {
    const ttlMs = options.ttlMs ?? 60 * 60 * 1000;
    this.staleRingMs = options.staleRingMs ?? DEFAULT_STALE_RING_MS;
    this.notRinging = new BoundedFifoMap(
      options.maxCalls ?? maxTrackedCalls(this.staleRingMs),
      ttlMs,
    );
    this.popped = new BoundedFifoMap(MAX_POPPED_CALLS, ttlMs);
    this.talking = new BoundedFifoMap(MAX_POPPED_CALLS, ttlMs);
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
      const ring = { to: call.to, ts: envelope.timestamp };
      const states = this.notRinging.get(id, nowMonotonic);
      if (states?.some((s) => supersedes(s, ring))) return { kind: 'ignored', why: 'late' };
      if (this.popped.has(id, nowMonotonic)) return { kind: 'ignored', why: 'already-popped' };
      if (ageMs() > this.staleRingMs) return { kind: 'ignored', why: 'stale' };
      this.popped.set(id, ring, nowMonotonic);
      return { kind: 'pop' };
    }
    const state: PartyTime = {
      to: call.to,
      ts: envelope.timestamp,
      ...(call.state === ANSWERED ? { answeredTs: envelope.timestamp } : {}),
    };
    this.notRinging.set(id, withParty(this.notRinging.get(id, nowMonotonic), state), nowMonotonic);
    const talking = this.talking.get(id, nowMonotonic);
    if (talking && talking.to === call.to && state.ts >= talking.ts && !TALKING.has(call.state)) {
      this.talking.delete(id);
      return { kind: 'hangup' };
    }
    const popped = this.popped.get(id, nowMonotonic);
    if (popped === undefined || !supersedes(state, popped))
      return { kind: 'ignored', why: 'not-popped' };
    this.popped.delete(id);
    // Answered on one of the user's numbers: its end is the call's end for the user.
    if (TALKING.has(call.state) && matcher.matches(call.to))
      this.talking.set(id, { to: call.to, ts: envelope.timestamp }, nowMonotonic);
    return { kind: 'dismiss' };
  }

  /** Calls remembered (both kinds). */
  get size(): number {
    return this.notRinging.size + this.popped.size + this.talking.size;
  }
}
