import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { createScaledClock, startSimulator } from '../../src-sim/index.ts';
import { getToken, listExtensions } from './helpers.ts';

describe('scaled clock', () => {
  it('runs time `speed` times faster and divides timers by it', async () => {
    const base = new FakeClock(Date.UTC(2026, 0, 1));
    const fast = createScaledClock(base, 120);
    const fired: number[] = [];
    fast.setTimeout(() => fired.push(fast.now()), 1_800_000);
    await base.advance(14_999);
    expect(fired).toEqual([]);
    await base.advance(1);
    expect(fired).toEqual([Date.UTC(2026, 0, 1) + 1_800_000]);
    expect(fast.monotonic()).toBe(1_800_000);
    expect(createScaledClock(base, 1)).toBe(base);
    expect(() => createScaledClock(base, 0)).toThrow(RangeError);
  });

  it('makes an 1800 s token last 15 s of base time at clockSpeed 120', async () => {
    const base = new FakeClock();
    const sim = await startSimulator({ clock: base, clockSpeed: 120 });
    try {
      const pair = await getToken(sim);
      expect(pair.access_token_expire_time).toBe(1800);
      await base.advance(14_990);
      expect((await listExtensions(sim, pair.access_token)).status).toBe(200);
      await base.advance(10);
      expect((await listExtensions(sim, pair.access_token)).body.errcode).toBe(10002);
    } finally {
      await sim.close();
    }
  });
});
