/**
 * The one back-off: exponential with full jitter ("Exponential Backoff And Jitter", AWS
 * Architecture Blog). The n-th consecutive failure waits a uniformly random time in
 * [0, min(cap, base * 2^(n-1))), so that many clients that failed together (a service outage, a
 * server restart) do not come back together; never less than the policy's `floorMs`, nor than a
 * server's `Retry-After` when one is given. `reset()` starts again from the base.
 *
 * The floor is the only difference between the two policies the app uses:
 * - STREAM_BACKOFF (event sources reconnecting): no floor. A reconnect right after a server
 *   restart may be immediate, and a thousand desktops dropped at once spread over the whole first
 *   window; a source calls reset() only once a connection has stayed up (not merely on connect),
 *   so a server that accepts and drops at once still backs off.
 * - TOKEN_BACKOFF (the token manager's retries): a 250 ms floor. Each retry is a login at the
 *   service (repeated ones can get an IP blocked), so a random() near 0 must never make two of
 *   them back to back.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** Lower bound of every delay (0: none). */
  floorMs: number;
}

/** Reconnects of the event streams: 0-500 ms, 0-1 s, 0-2 s ... at most 30 s. */
export const STREAM_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 30_000, floorMs: 0 };

/** Token requests: 1 s, 2 s, 4 s ... at most 5 minutes (one request per ~2.5 min in an outage). */
export const TOKEN_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 5 * 60_000, floorMs: 250 };

export class Backoff {
  readonly policy: BackoffPolicy;
  private readonly random: () => number;
  private failures = 0;

  constructor(policy: BackoffPolicy, random: () => number = Math.random) {
    this.policy = policy;
    this.random = random;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(retryAfterMs?: number): number {
    const { baseMs, capMs, floorMs } = this.policy;
    const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    const r = Math.min(1, Math.max(0, this.random()));
    const delay = Math.max(floorMs, Math.floor(r * ceiling));
    return retryAfterMs !== undefined ? Math.max(delay, retryAfterMs) : delay;
  }

  /** Failures counted since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}
