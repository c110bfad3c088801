/**
 * The relay's one rate limit: a token bucket holding at most `capacity` tokens, refilled at
 * `perMinute` a minute on the monotonic clock. Frames a client may send (client-session.ts) and
 * refusals a client address may cause (refusal-budget.ts) are each one of these.
 */
export class TokenBucket {
  private readonly capacity: number;
  private readonly perMs: number;
  private readonly monotonic: () => number;
  private tokens: number;
  private at: number;

  /** Starts full. */
  constructor(capacity: number, perMinute: number, monotonic: () => number) {
    this.capacity = capacity;
    this.perMs = perMinute / 60_000;
    this.monotonic = monotonic;
    this.tokens = capacity;
    this.at = monotonic();
  }

  /** Tokens available now (may be below zero after spend() ran it into debt). */
  level(): number {
    const now = this.monotonic();
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.at) * this.perMs);
    this.at = now;
    return this.tokens;
  }

  /** True when nothing spent is still to be refilled. */
  isFull(): boolean {
    return this.level() >= this.capacity;
  }

  /** Takes a token if one is there. */
  take(): boolean {
    if (this.level() < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Gives back a token taken for something that did not happen after all (up to the capacity). */
  give(): void {
    this.tokens = Math.min(this.capacity, this.level() + 1);
  }

  /** Spends a token whether or not one is there (a refusal already happened). */
  spend(): void {
    this.level();
    this.tokens -= 1;
  }
}
