/// <reference types="node" />
// Node's globals are used here; the renderer's type check (tsconfig.web.json, without Node's
// types) reaches this file through the core's types, so it names them itself.
/**
 * Time, injected. Every service that waits, expires or measures takes a Clock in its constructor so
 * that tests can run hours of token lifecycle, heartbeats and back-off on a fake clock in
 * milliseconds (see test/support/fake-clock.ts).
 *
 * Two notions of time matter on a laptop:
 * - `now()` is the wall clock (ms since the Unix epoch). It jumps forward when the machine wakes
 *   from sleep and whenever the user or NTP changes the time. Expiry is judged on it.
 * - timers (`setTimeout`) run on a monotonic clock that, on most OSes, does not advance while the
 *   machine sleeps: a timer due in 5 minutes that spans a 3-hour sleep fires 5 awake-minutes later.
 *   So a timer alone never proves a token is still valid.
 */
export type TimerHandle = { readonly __brand: 'TimerHandle' };

export interface Clock {
  /** Wall-clock time in ms since the Unix epoch. */
  now(): number;
  /** Monotonic time in ms from an arbitrary origin, for measuring intervals. */
  monotonic(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

/**
 * The real clock. Its timers hold the process, as Node's own do: a pending reconnect, back-off or
 * token refresh is work still to do, and a runner that lost its socket must wait for it rather than
 * exit. A process ends when its owner stops what it started (every service clears its timers in
 * stop()), never because the only thing left to do was a retry.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(callback, ms) {
    return setTimeout(callback, Math.max(0, ms)) as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    if (handle !== undefined) clearTimeout(handle as unknown as NodeJS.Timeout);
  },
};

/** Resolves after `ms` on the given clock. */
export function delay(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
