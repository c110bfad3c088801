import { describe, expect, it } from 'vitest';
import { delay } from '../../src-shared/process/clock.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

describe('FakeClock', () => {
  it('fires timers in due order, each seeing its own time', async () => {
    const clock = new FakeClock(1_000_000);
    const seen: Array<[string, number]> = [];
    clock.setTimeout(() => seen.push(['b', clock.now()]), 200);
    clock.setTimeout(() => seen.push(['a', clock.now()]), 100);
    const cancelled = clock.setTimeout(() => seen.push(['c', clock.now()]), 150);
    clock.clearTimeout(cancelled);
    await clock.advance(250);
    expect(seen).toEqual([
      ['a', 1_000_100],
      ['b', 1_000_200],
    ]);
    expect(clock.now()).toBe(1_000_250);
  });

  it('lets promise chains started by a timer schedule and fire further timers', async () => {
    const clock = new FakeClock(0);
    let done = false;
    void (async () => {
      await delay(clock, 1000);
      await delay(clock, 1000);
      done = true;
    })();
    await clock.advance(1999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
  });

  it('models sleep: the wall clock jumps while timers stay put', async () => {
    const clock = new FakeClock(0);
    let fired = false;
    clock.setTimeout(() => (fired = true), 60_000);
    clock.sleep(3 * 3600_000);
    expect(clock.now()).toBe(3 * 3600_000);
    expect(fired).toBe(false);
    await clock.advance(60_000);
    expect(fired).toBe(true);
  });

  it('delay() rejects when aborted and clears its timer', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    const p = delay(clock, 5000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pendingTimers()).toBe(0);
  });
});
