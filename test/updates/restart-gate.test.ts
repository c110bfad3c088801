/** "May we restart now?" on the fake clock: never while a call rings, nor within the quiet period after. */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { QUIET_AFTER_CALL_MS, RestartGate } from '../../src-main/core/updates/restart-gate.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

function setup() {
  const clock = new FakeClock();
  const gate = new RestartGate({ clock, logger: memoryLogger() });
  const restarts: number[] = [];
  const restart = () => restarts.push(clock.monotonic());
  return { clock, gate, restarts, restart };
}

describe('RestartGate', () => {
  it('allows a restart at once when no call has rung', () => {
    const { gate, restarts, restart } = setup();
    expect(gate.decide()).toEqual({ restart: true });
    gate.whenAllowed(restart);
    expect(restarts).toEqual([0]);
  });

  it('never restarts while a call rings, however long it rings', async () => {
    const { clock, gate, restarts, restart } = setup();
    gate.setRinging(['c1']);
    gate.whenAllowed(restart);
    expect(gate.decide()).toEqual({ restart: false, reason: 'a call is ringing', retryInMs: null });
    await clock.advance(60 * 60_000);
    expect(restarts).toEqual([]);
  });

  it('waits the quiet period after the last ring stopped, then restarts once', async () => {
    const { clock, gate, restarts, restart } = setup();
    expect(QUIET_AFTER_CALL_MS).toBe(3 * 60_000);
    gate.setRinging(['c1']);
    gate.whenAllowed(restart);
    await clock.advance(20_000);
    gate.setRinging([]);
    expect(gate.decide()).toEqual({
      restart: false,
      reason: 'a call rang 0 s ago',
      retryInMs: QUIET_AFTER_CALL_MS,
    });
    await clock.advance(QUIET_AFTER_CALL_MS - 1);
    expect(restarts).toEqual([]);
    await clock.advance(1);
    expect(restarts).toEqual([20_000 + QUIET_AFTER_CALL_MS]);
    await clock.advance(60 * 60_000);
    expect(restarts).toHaveLength(1);
  });

  it('starts the quiet period again when another call rings during it', async () => {
    const { clock, gate, restarts, restart } = setup();
    gate.setRinging(['c1']);
    gate.setRinging([]);
    gate.whenAllowed(restart);
    await clock.advance(2 * 60_000);
    gate.setRinging(['c2']);
    await clock.advance(30_000);
    gate.setRinging(['c2', 'c3']);
    await clock.advance(10_000);
    gate.setRinging(['c3']); // c2 stopped: quiet time runs only once every call stopped
    await clock.advance(QUIET_AFTER_CALL_MS);
    expect(restarts).toEqual([]);
    gate.setRinging([]);
    const stopped = clock.monotonic();
    await clock.advance(QUIET_AFTER_CALL_MS);
    expect(restarts).toEqual([stopped + QUIET_AFTER_CALL_MS]);
  });

  it('counts quiet time awake: a laptop asleep right after a call still waits', async () => {
    const { clock, gate, restarts, restart } = setup();
    gate.setRinging(['c1']);
    gate.setRinging([]);
    gate.whenAllowed(restart);
    clock.sleep(2 * 60 * 60_000); // wall clock jumps two hours, timers do not move
    expect(gate.decide()).toMatchObject({ restart: false });
    expect(restarts).toEqual([]);
  });

  it('forgets a cancelled wait, and a restart that throws does not throw out of the timer', async () => {
    const { clock, gate, restarts, restart } = setup();
    gate.setRinging(['c1']);
    const cancel = gate.whenAllowed(restart);
    cancel();
    gate.setRinging([]);
    await clock.advance(QUIET_AFTER_CALL_MS);
    expect(restarts).toEqual([]);

    gate.setRinging(['c2']);
    gate.whenAllowed(() => {
      throw new Error('installer missing');
    });
    gate.setRinging([]);
    await expect(clock.advance(QUIET_AFTER_CALL_MS)).resolves.toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
  });
});
