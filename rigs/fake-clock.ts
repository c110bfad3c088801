import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';

interface Timer {
  id: number;
  due: number;
  callback: () => void;
}

/** Lets pending promise callbacks run (several rounds, so chains of awaits settle). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A deterministic clock for tests. Timers run on monotonic time; the wall clock is monotonic time
 * plus an offset, so `sleep()` can model a suspended laptop (wall clock jumps, timers do not move)
 * and `skewWall()` a desktop clock that is minutes off.
 */
export class FakeClock implements Clock {
  private mono = 0;
  private wallOffset: number;
  private nextId = 1;
  private timers: Timer[] = [];

  constructor(startWallMs = Date.UTC(2026, 10, 22, 9, 0, 0)) {
    this.wallOffset = startWallMs;
  }

  now(): number {
    return this.mono + this.wallOffset;
  }

  monotonic(): number {
    return this.mono;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer: Timer = { id: this.nextId++, due: this.mono + Math.max(0, ms), callback };
    this.timers.push(timer);
    return timer.id as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle === undefined) return;
    const id = handle as unknown as number;
    this.timers = this.timers.filter((t) => t.id !== id);
  }

  /** Number of timers not yet fired. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due, in order, each seeing `now()` at
   * its own due time; pending promises settle after each timer.
   */
  async advance(ms: number): Promise<void> {
    const target = this.mono + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.earliest();
      if (!next || next.due > target) break;
      this.mono = next.due;
      this.timers = this.timers.filter((t) => t !== next);
      next.callback();
      await flushMicrotasks();
    }
    this.mono = target;
    await flushMicrotasks();
  }

  /** Machine suspended for `ms`: the wall clock jumps, monotonic timers do not advance. */
  sleep(ms: number): void {
    this.wallOffset += ms;
  }

  /** The desktop's wall clock is changed by `ms` (positive: ahead), e.g. a mis-set clock. */
  skewWall(ms: number): void {
    this.wallOffset += ms;
  }

  private earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers)
      if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    return best;
  }
}

/**
 * Moves `clock` by `totalMs` in steps of `stepMs`, pausing a few real milliseconds after each so
 * that real socket and HTTP I/O between the parts on this clock lands before time moves on (a frame
 * sent at one step is received before the next; its age stays within one step).
 */
export async function advanceWithRealIo(
  clock: FakeClock,
  totalMs: number,
  stepMs = 500,
): Promise<void> {
  for (let done = 0; done < totalMs; done += stepMs) {
    await clock.advance(Math.min(stepMs, totalMs - done));
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
}
