/**
 * Exponential back-off with full jitter ("Exponential Backoff And Jitter", AWS Architecture Blog):
 * the n-th consecutive failure waits a uniformly random time in [0, min(cap, base * 2^(n-1))], so
 * many clients that failed together (a service outage) do not come back together. A server's
 * Retry-After is a floor: we never come back sooner than it asked.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** Lower bound, so a random() near 0 never turns into an immediate retry loop. */
  floorMs: number;
}

/** 1 s, 2 s, 4 s ... capped at 5 minutes: a service outage costs one request per client per ~2.5 min on average. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 5 * 60 * 1000, floorMs: 250 };

/** The wait before retry number `attempt` (1 = the first retry after one failure). */
export function backoffDelay(
  attempt: number,
  random: () => number,
  retryAfterMs?: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  const r = Math.min(1, Math.max(0, random()));
  const jittered = Math.max(policy.floorMs, Math.round(r * exp));
  return retryAfterMs !== undefined ? Math.max(jittered, retryAfterMs) : jittered;
}
