/**
 * Remembers event ids seen recently so each event is handled once, however many sockets, rotations
 * and relays deliver it. Memory is bounded two ways, whichever bites first: at most `maxIds` ids,
 * and none older than `windowMs` (monotonic time, so a laptop that slept keeps its ids longer, never
 * shorter). A Map keeps insertion order, so the oldest id is always first and eviction is O(1).
 *
 * Defaults: 100,000 ids / 25 h (the webhook retry window of 24 h plus a margin). At sustained
 * tenant-wide traffic the count bound wins (at 2,000 events/s the window is ~50 s); pops stay
 * correct beyond it because the call tracker never pops one call twice and never pops a stale ring.
 */
export interface DedupeOptions {
  maxIds?: number;
  windowMs?: number;
}

export const DEFAULT_DEDUPE: Required<DedupeOptions> = {
  maxIds: 100_000,
  windowMs: 25 * 60 * 60 * 1000,
};

export class DedupeSet {
  private readonly seen = new Map<string, number>();
  private readonly maxIds: number;
  private readonly windowMs: number;

  constructor(options: DedupeOptions = {}) {
    this.maxIds = Math.max(1, options.maxIds ?? DEFAULT_DEDUPE.maxIds);
    this.windowMs = Math.max(0, options.windowMs ?? DEFAULT_DEDUPE.windowMs);
  }

  /** True the first time `id` is offered (and remembers it); false for a repeat. */
  firstSeen(id: string, nowMonotonic: number): boolean {
    this.expire(nowMonotonic);
    if (this.seen.has(id)) return false;
    this.seen.set(id, nowMonotonic);
    if (this.seen.size > this.maxIds) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private expire(nowMonotonic: number): void {
    const cutoff = nowMonotonic - this.windowMs;
    for (const [id, at] of this.seen) {
      if (at >= cutoff) break;
      this.seen.delete(id);
    }
  }
}
