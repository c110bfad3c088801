/**
 * Reconnect delays: exponential back-off with full jitter (delay = random() * min(cap, base * 2^n)),
 * so that thousands of desktops dropped by one server restart do not come back in lock-step.
 * Defaults: base 500 ms, cap 30 s. `n` counts failures since the last stable connection; the
 * source calls `reset()` once a connection has stayed subscribed for `stableMs` (30 s), not merely
 * on connect, so a server that accepts and drops at once still backs off.
 */
export interface BackoffOptions {
  baseMs?: number;
  capMs?: number;
  random?: () => number;
}

export class Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  private readonly random: () => number;
  private failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 500;
    this.capMs = options.capMs ?? 30_000;
    this.random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.floor(this.random() * ceiling);
  }

  get attempts(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}
