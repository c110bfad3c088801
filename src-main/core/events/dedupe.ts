/**
 * Remembers event ids seen recently so each event is handled once, however many sockets, rotations
 * and relays deliver it. Memory is bounded two ways, whichever bites first: at most `maxIds` ids,
 * and none older than `windowMs` (monotonic time, so a laptop that slept keeps its ids longer, never
 * shorter). Ids are at most 128 characters (envelope.ts), so the bound is also one in bytes:
 * about 100 B of bookkeeping plus the id per entry, ~15 MB at the default 100,000.
 *
 * Defaults: 100,000 ids / 25 h (the webhook retry window of 24 h plus a margin). At sustained
 * tenant-wide traffic the count bound wins (at 2,000 events/s the window is ~50 s); pops stay
 * correct beyond it because the call tracker never pops one call twice and never pops a stale ring.
 */
import { BoundedFifoMap } from '../../../src-shared/bounded-map.ts';

export interface DedupeOptions {
  maxIds?: number;
  windowMs?: number;
}

export const DEFAULT_DEDUPE: Required<DedupeOptions> = {
  maxIds: 100_000,
  windowMs: 25 * 60 * 60 * 1000,
};

export class DedupeSet {
  private readonly seen: BoundedFifoMap<true>;

  constructor(options: DedupeOptions = {}) {
    this.seen = new BoundedFifoMap(
      options.maxIds ?? DEFAULT_DEDUPE.maxIds,
      Math.max(0, options.windowMs ?? DEFAULT_DEDUPE.windowMs),
    );
  }

  /** True the first time `id` is offered (and remembers it); false for a repeat. */
  firstSeen(id: string, nowMonotonic: number): boolean {
    if (this.seen.has(id, nowMonotonic)) return false;
    this.seen.set(id, true, nowMonotonic);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
