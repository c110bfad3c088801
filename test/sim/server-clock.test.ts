import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
});

describe("the simulator's clock in its answers", () => {
  it('the HTTP Date header reads the simulator clock, the one its event timestamps come from', async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 2, 3, 4, 5));
    sim = await startSimulator({ clock });
    await clock.advance(60_000);
    const res = await fetch(sim.baseUrl, { method: 'HEAD' });
    expect(res.headers.get('date')).toBe('Thu, 02 Jan 2031 03:05:05 GMT');
    expect(sim.emit(30009, {}).timestamp).toBe(Date.UTC(2031, 0, 2, 3, 5, 5));
  });
});
