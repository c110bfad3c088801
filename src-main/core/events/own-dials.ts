/**
 * The user's own dialled calls never pop (issue 38 item 2). With caller-first dialling
 * (docs/phone-systems/yeastar-p-series.md section 10, *Make a Call*) the first thing the PBX
 * reports of a call Screenpop started is the user's own extension ringing, with no caller: left
 * alone it would pop as an incoming ring from an unknown caller. This is the one rule that says
 * which rings are the user's own calls; the pipeline asks it before it emits a pop.
 *
 * - A call is the user's own when its `call_id` is one a dial answered (`DialTicket.answered`).
 * - The ring may be reported before that answer arrives: while a dial is in flight, a ring that
 *   would pop is held (at most OWN_DIAL_HOLD_MS). When the dial answers, a held ring of its call
 *   is the user's own; the others pop as usual once no dial is in flight. A failed dial, or the
 *   time limit, pops what was held: a real caller is never lost, only delayed by the dial's answer.
 * - A held ring whose call ended before it was decided is dropped (nothing was shown).
 *
 * Bounded: at most MAX_OWN_CALLS remembered for OWN_CALL_TTL_MS, MAX_PENDING_DIALS in flight,
 * MAX_HELD_RINGS held (past that a ring pops at once). Timers are cleared by `clear()`.
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';

/** The longest a ring is held waiting for a dial's answer (a dial is a single short request). */
export const OWN_DIAL_HOLD_MS = 5_000;
/** Own calls remembered: a user dials a few a minute; an hour of them at most. */
export const MAX_OWN_CALLS = 200;
export const OWN_CALL_TTL_MS = 60 * 60_000;
/** Dials in flight at once (the UI sends one at a time; the runner's socket a few). */
export const MAX_PENDING_DIALS = 8;
/** Rings held at once, waiting for a dial's answer. */
export const MAX_HELD_RINGS = 16;

/** A ring of the user's own call: what the UI may show as "Calling <number>…". */
export interface OwnCall {
  callId: string;
  /** The number the user dialled. */
  number: string;
  /** The user's extension the call rang first (caller-first dialling), from its ring. */
  extension?: string;
  /** Wall-clock ms the ring of the user's extension arrived (the call's start, for its log). */
  startedAt?: number;
}

/** What the pipeline does with a ring that would pop. */
export type OwnDialVerdict = 'pop' | 'own' | 'held';

/** One dial in flight: say how it ended. Either call ends it; later calls do nothing. */
export interface DialTicket {
  answered(callId: string): void;
  failed(): void;
}

interface Held<T> {
  callId: string;
  ring: T;
  timer: TimerHandle;
}

export interface OwnDialsDeps<T> {
  clock: Clock;
  /** A held ring that is not the user's own: pop it now. */
  release: (ring: T) => void;
  /** A ring (held or not) of the user's own call, and that ring. */
  own: (call: OwnCall, ring: T) => void;
}

export class OwnDials<T> {
  private readonly d: OwnDialsDeps<T>;
  /** call_id -> the number dialled, for the calls a dial answered. */
  private readonly calls: BoundedFifoMap<string>;
  private readonly pending = new Map<number, string>();
  private nextTicket = 0;
  private held: Array<Held<T>> = [];

  constructor(deps: OwnDialsDeps<T>) {
    this.d = deps;
    this.calls = new BoundedFifoMap(MAX_OWN_CALLS, OWN_CALL_TTL_MS);
  }

  /**
   * A dial of `number` is about to be sent: rings that would pop are held until it answers.
   * Past MAX_PENDING_DIALS the oldest is taken as failed (its rings pop).
   */
  begin(number: string): DialTicket {
    if (this.pending.size >= MAX_PENDING_DIALS) {
      const oldest = this.pending.keys().next().value as number;
      this.pending.delete(oldest);
    }
    const id = this.nextTicket++;
    this.pending.set(id, number);
    let done = false;
    return {
      answered: (callId) => {
        if (done) return;
        done = true;
        this.pending.delete(id);
        this.calls.set(callId, number, this.clock.monotonic());
        this.settle();
      },
      failed: () => {
        if (done) return;
        done = true;
        this.pending.delete(id);
        this.settle();
      },
    };
  }

  /** A ring that would pop: the user's own call, held for a dial in flight, or a pop. */
  decide(callId: string, ring: T): OwnDialVerdict {
    const number = this.calls.get(callId, this.clock.monotonic());
    if (number !== undefined) {
      this.d.own({ callId, number }, ring);
      return 'own';
    }
    if (this.pending.size === 0 || this.held.length >= MAX_HELD_RINGS) return 'pop';
    const timer = this.clock.setTimeout(() => this.expire(callId), OWN_DIAL_HOLD_MS);
    this.held.push({ callId, ring, timer });
    return 'held';
  }

  /** The call ended: a ring of it still held is dropped (never shown). True if one was. */
  ended(callId: string): boolean {
    const before = this.held.length;
    this.held = this.held.filter((h) => {
      if (h.callId !== callId) return true;
      this.clock.clearTimeout(h.timer);
      return false;
    });
    return this.held.length !== before;
  }

  /** Whether `callId` is a call the user dialled (while remembered). */
  isOwn(callId: string): boolean {
    return this.calls.has(callId, this.clock.monotonic());
  }

  /** Stops every timer; held rings are dropped (the connection is going away). */
  clear(): void {
    for (const h of this.held) this.clock.clearTimeout(h.timer);
    this.held = [];
    this.pending.clear();
  }

  private get clock(): Clock {
    return this.d.clock;
  }

  /** After a dial ended: own rings decided, and the rest popped once no dial is in flight. */
  private settle(): void {
    const keep: Array<Held<T>> = [];
    const release: Array<Held<T>> = [];
    for (const h of this.held) {
      const number = this.calls.get(h.callId, this.clock.monotonic());
      if (number !== undefined) {
        this.clock.clearTimeout(h.timer);
        this.d.own({ callId: h.callId, number }, h.ring);
      } else if (this.pending.size === 0) release.push(h);
      else keep.push(h);
    }
    this.held = keep;
    for (const h of release) {
      this.clock.clearTimeout(h.timer);
      this.d.release(h.ring);
    }
  }

  private expire(callId: string): void {
    const mine = this.held.filter((h) => h.callId === callId);
    this.held = this.held.filter((h) => h.callId !== callId);
    for (const h of mine) this.d.release(h.ring);
  }
}
