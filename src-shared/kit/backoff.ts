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

/**
 * The ceilings are chosen for a phone app, where every second the stream is down after the service
 * is back is a ring nobody sees (a ring lasts tens of seconds; a pop older than 45 s is never
 * shown). `npm run bench:reconnect` measured, per ceiling, the time from a service restart to the
 * stream being up again (15 trials each, the real source and token manager against the
 * simulator; mean / p90 / max):
 *
 *   stream:token cap | outage 20 s-10 min         | outage 40 min (the token expired meanwhile)
 *   30 s : 5 min     | 9-11 s / 20 s / 27 s       | 79 s / 114 s / 248 s
 *   15 s : 60 s      | 4-5 s / 9-12 s / 12 s      | 25 s / 51 s / 63 s
 *   10 s : 30 s      | 3-4 s / 5-8 s / 8 s        | 14 s / 20 s / 23 s
 *
 * 10 s and 30 s keep the worst case inside one ring. What it costs: one desktop tries about 12
 * reconnects a minute during an outage (4-7 with 30 s), each a refused TCP connection or a
 * handshake answered 503 by the service's balancer, and after a restart a fleet comes back spread
 * over 10 s (full jitter) rather than 30 s, within the service's rate limit (429 + Retry-After,
 * which is always obeyed). A token request that fails for a network or server reason is no failed
 * login (10001 stops retries at once), so it need not wait minutes. And when the network comes
 * back (wake 'online': Electron's net.isOnline in the app, a new address in the runner) the wait
 * ends at once.
 */

/** Reconnects of the event streams: 0-500 ms, 0-1 s, 0-2 s ... at most 10 s. */
export const STREAM_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 10_000, floorMs: 0 };

/** Token requests: 1 s, 2 s, 4 s ... at most 30 s (one request per ~15 s in an outage). */
export const TOKEN_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 30_000, floorMs: 250 };

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
