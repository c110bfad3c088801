/**
 * Refusals a client address may cause per minute (a token bucket refilled at that rate, as much
 * again in a burst): made-up service tokens at the token check, wrong enrolment codes at the
 * enrolment endpoint. Past it, that address is refused without the work (a call at the service,
 * a look-up) and without a chance to guess on. Bounded: at most 100,000 addresses are tracked,
 * the oldest forgotten first; a full bucket is forgotten at once.
 */
export class RefusalBudget {
  private readonly perMinute: number;
  private readonly monotonic: () => number;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perMinute: number, monotonic: () => number) {
    this.perMinute = perMinute;
    this.monotonic = monotonic;
  }

  /** Refusals the address may still cause now. */
  left(address: string): number {
    const b = this.buckets.get(address);
    if (!b) return this.perMinute;
    const now = this.monotonic();
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
    b.at = now;
    if (b.tokens >= this.perMinute) this.buckets.delete(address);
    return b.tokens;
  }

  /** True while the address may cause another refusal. */
  allows(address: string): boolean {
    return this.left(address) >= 1;
  }

  spend(address: string): void {
    const tokens = this.left(address) - 1;
    if (this.buckets.size >= 100_000) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(address, { tokens, at: this.monotonic() });
  }
}
