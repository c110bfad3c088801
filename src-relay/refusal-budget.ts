import { TokenBucket } from './token-bucket.ts';

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
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(perMinute: number, monotonic: () => number) {
    this.perMinute = perMinute;
    this.monotonic = monotonic;
  }

  /** Refusals the address may still cause now. */
  left(address: string): number {
    const bucket = this.buckets.get(address);
    if (!bucket) return this.perMinute;
    if (bucket.isFull()) this.buckets.delete(address);
    return bucket.level();
  }

  /** True while the address may cause another refusal. */
  allows(address: string): boolean {
    return this.left(address) >= 1;
  }

  /**
   * Takes one refusal from the address's budget before the work that may be refused starts (so
   * requests at once cannot all pass `allows` before any of them is counted); false, taking
   * nothing, when none is left. `refund` gives it back when the request was not refused after all.
   */
  reserve(address: string): boolean {
    if (!this.allows(address)) return false;
    this.spend(address);
    return true;
  }

  refund(address: string): void {
    const bucket = this.buckets.get(address);
    if (!bucket) return;
    bucket.give();
    if (bucket.isFull()) this.buckets.delete(address);
  }

  spend(address: string): void {
    const bucket =
      this.buckets.get(address) ?? new TokenBucket(this.perMinute, this.perMinute, this.monotonic);
    // Most recently refused last: the oldest is the first forgotten.
    this.buckets.delete(address);
    if (this.buckets.size >= 100_000) this.buckets.delete(this.buckets.keys().next().value!);
    bucket.spend();
    this.buckets.set(address, bucket);
  }
}
