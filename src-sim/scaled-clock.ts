import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';

/**
 * A clock running `speed` times faster than `base`: time elapsed since creation is multiplied by
 * `speed` and timers are divided by it. At speed 120 a 1800-second token lasts 15 real seconds.
 * Speed 1 returns `base` itself.
 */
export function createScaledClock(base: Clock, speed: number): Clock {
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new RangeError('clock speed must be a positive number');
  if (speed === 1) return base;
  const wallStart = base.now();
  const monoStart = base.monotonic();
  return {
    now: () => wallStart + (base.monotonic() - monoStart) * speed,
    monotonic: () => monoStart + (base.monotonic() - monoStart) * speed,
    setTimeout: (callback: () => void, ms: number): TimerHandle =>
      base.setTimeout(callback, Math.max(0, ms) / speed),
    clearTimeout: (handle: TimerHandle | undefined) => base.clearTimeout(handle),
  };
}
