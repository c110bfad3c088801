import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import type { Rng } from './rng.ts';
import type { CallBookLike } from './calls.ts';
import type { Extension, TrafficOptions } from './types.ts';

/**
 * Seeded background traffic: many concurrent calls, each a realistic 30011 sequence, interleaved,
 * at `ratePerSec` events per (simulated) second. Every step emits exactly one event and draws from
 * the seeded generator, so the same seed gives the same event sequence however the ticks fall.
 *
 * Call shapes: answered (ringing, answered, sometimes hold + answered, ended), missed (ringing,
 * ended) and ring groups (two or three extensions ring, one answers, the others end).
 */
export interface TrafficGeneratorOptions {
  clock: Clock;
  rng: Rng;
  calls: CallBookLike;
  extensions: ReadonlyArray<Extension>;
  /**
   * Numbers of queues and ring groups (Yeastar P-Series): every call that rings several extensions,
   * and every fifth of the others, comes through one of them in turn (no draw from `rng`, so the
   * same seed gives the same calls with or without them).
   */
  groups?: readonly string[];
}

interface Step {
  state: string;
  /** The party; none for the whole call (a missed call: the caller hangs up). */
  to?: string;
}

interface ActiveCall {
  callId: string | undefined;
  from: string;
  parties: string[];
  steps: Step[];
}

const COUNTRY_PREFIXES = [
  '+1415555',
  '+1212555',
  '+1646555',
  '+4420794',
  '+4930901',
  '+3314578',
  '+6129876',
  '+8135550',
];
const MAX_RATE = 100_000;

export class TrafficGenerator {
  private readonly opts: TrafficGeneratorOptions;
  private timer: TimerHandle | undefined;
  private running = false;
  private rate = 0;
  private startedAt = 0;
  private emitted = 0;
  private targets: string[] = [];
  private internal: string[] = [];
  private busy = new Set<string>();
  private active: ActiveCall[] = [];
  private concurrency = 2;
  private started = 0;

  constructor(opts: TrafficGeneratorOptions) {
    this.opts = opts;
  }

  start(opts: TrafficOptions): void {
    const rate = Number(opts.ratePerSec);
    if (!Number.isFinite(rate) || rate <= 0 || rate > MAX_RATE)
      throw new RangeError(`ratePerSec must be in (0, ${MAX_RATE}]`);
    const exclude = new Set((opts.excludeExtensions ?? []).map(String));
    const all = this.opts.extensions.map((e) => e.number);
    const targets = (opts.ringTo ? opts.ringTo.map(String) : all).filter((n) => !exclude.has(n));
    if (targets.length === 0)
      throw new RangeError('traffic has no extension to ring (all excluded)');
    this.stop();
    this.rate = rate;
    this.targets = targets;
    this.internal = all.filter((n) => !exclude.has(n));
    // Enough calls in flight that each lasts a few seconds, never more than the targets can carry.
    this.concurrency = Math.max(1, Math.min(Math.ceil(rate * 4), Math.ceil(targets.length * 0.6)));
    this.running = true;
    this.started = 0;
    this.startedAt = this.opts.clock.monotonic();
    this.emitted = 0;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    this.opts.clock.clearTimeout(this.timer);
    this.timer = undefined;
    // Calls in flight are dropped without further events; a new start() begins fresh ones.
    for (const call of this.active) if (call.callId) this.opts.calls.forget(call.callId);
    this.active = [];
    this.busy.clear();
  }

  private schedule(): void {
    const interval = Math.min(1000, Math.max(10, 1000 / this.rate));
    this.timer = this.opts.clock.setTimeout(() => this.tick(), interval);
  }

  private tick(): void {
    if (!this.running) return;
    const elapsed = this.opts.clock.monotonic() - this.startedAt;
    let due = Math.floor((elapsed / 1000) * this.rate) - this.emitted;
    // After a long pause (blocked event loop), do not burst more than one second's worth.
    if (due > Math.ceil(this.rate)) {
      this.emitted += due - Math.ceil(this.rate);
      due = Math.ceil(this.rate);
    }
    for (let i = 0; i < due && this.running; i++) this.step();
    this.emitted += due;
    if (this.running) this.schedule();
  }

  /** Exactly one event. */
  private step(): void {
    const { rng } = this.opts;
    if (this.active.length < this.concurrency && this.startCall()) return;
    if (this.active.length === 0) return;
    const index = Math.floor(rng.next() * this.active.length);
    const call = this.active[index] as ActiveCall;
    const step = call.steps.shift() as Step;
    if (step.state === 'ringing') {
      call.callId = this.opts.calls.ring({
        from: call.from,
        to: step.to as string,
        ...(call.callId ? { callId: call.callId } : {}),
      });
    } else
      this.opts.calls.setState(
        call.callId as string,
        step.state,
        step.to !== undefined ? { to: step.to } : {},
      );
    if (call.steps.length === 0) {
      this.active[index] = this.active[this.active.length - 1] as ActiveCall;
      this.active.pop();
      for (const p of call.parties) this.busy.delete(p);
    }
  }

  /** Plans a new call and emits its first ringing; false when every target is busy. */
  private startCall(): boolean {
    const { rng } = this.opts;
    const free = (n: string) => !this.busy.has(n);
    const first = this.pickFree(free);
    if (first === undefined) return false;
    const parties = [first];
    const shape = rng.next();
    if (shape < 0.08) {
      const extra = rng.int(1, 2);
      for (let i = 0; i < extra; i++) {
        const p = this.pickFree((n) => free(n) && !parties.includes(n));
        if (p !== undefined) parties.push(p);
      }
    }
    for (const p of parties) this.busy.add(p);
    const from = this.pickCaller(parties);
    const steps: Step[] = parties.map((to) => ({ state: 'ringing', to }));
    if (shape >= 0.08 && shape < 0.33) {
      steps.push({ state: 'ended' }); // missed: the caller hangs up
    } else {
      const answerer = rng.pick(parties);
      steps.push({ state: 'answered', to: answerer });
      for (const p of parties) if (p !== answerer) steps.push({ state: 'ended', to: p });
      if (rng.next() < 0.3)
        steps.push({ state: 'hold', to: answerer }, { state: 'answered', to: answerer });
      steps.push({ state: 'ended', to: answerer });
    }
    const groups = this.opts.groups ?? [];
    const n = this.started++;
    const via =
      groups.length > 0 && (parties.length > 1 || n % 5 === 0)
        ? groups[n % groups.length]
        : undefined;
    const call: ActiveCall = { callId: undefined, from, parties, steps };
    this.active.push(call);
    // The first ringing goes out now, so this step emitted exactly one event.
    const firstStep = call.steps.shift() as Step;
    call.callId = this.opts.calls.ring({
      from,
      to: firstStep.to as string,
      ...(via !== undefined && { via }),
    });
    return true;
  }

  private pickFree(ok: (n: string) => boolean): string | undefined {
    const { rng } = this.opts;
    for (let attempt = 0; attempt < 8; attempt++) {
      const n = rng.pick(this.targets);
      if (ok(n)) return n;
    }
    return undefined;
  }

  /** Mostly outside callers in international format, some colleagues calling from their extension. */
  private pickCaller(parties: string[]): string {
    const { rng } = this.opts;
    if (this.internal.length > parties.length && rng.next() < 0.2) {
      for (let attempt = 0; attempt < 8; attempt++) {
        const n = rng.pick(this.internal);
        if (!parties.includes(n)) return n;
      }
    }
    return `${rng.pick(COUNTRY_PREFIXES)}${String(rng.int(0, 9999)).padStart(4, '0')}`;
  }
}
