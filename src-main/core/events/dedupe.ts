/**
 * Remembers event ids seen recently so each event is handled once, however many sockets, rotations
 * and relays deliver it. Memory is bounded two ways, whichever bites first: at most `maxIds` ids,
 * and none older than `windowMs` (monotonic time, so a laptop that slept keeps its ids longer, never
 * shorter). Ids are at most 128 characters (envelope.ts), so the bound is also one in bytes; what
 * it costs at full bounds is measured and printed by `npm run bench:runner` (its caches part).
 *
 * Sizes, from their rules (bench/runner-caches.ts measures what they cost):
 * - windowMs, 25 h: the service retries a webhook for 24 h (docs/wire-protocol.md section 7), and
 *   the relay keeps and replays events for 24 h; one hour of margin, as the relay's own dedupe.
 * - maxIds, 100,000: in relay mode every id this desktop receives is one the relay can replay to it
 *   after a reconnect, and the relay keeps at most 100,000 events per tenant for 24 h
 *   (src-relay/config.ts `retention`): the set holds all of them. A busy agent's own traffic
 *   brings far fewer: 21 calls an hour (CALLS_PER_AGENT_HOUR, call-tracker.ts) x ~3.6 events
 *   x 25 h = ~1,900 ids. With the direct stream (every call of the tenant) the count bound wins:
 *   at a 1,000-agent centre (21,000 calls, ~76,000 events an hour) the ids of the last ~80 minutes
 *   are kept. Beyond that a duplicate is harmless: a ring older than the stale limit never pops,
 *   the call tracker pops and dismisses each call once, and voicemail and SMS are deduplicated by
 *   their own ids for 25 h (notices.ts).
 * - What it costs full (`npm run bench:runner`, caches part): 10.4 MiB with the service's
 *   36-character ids (reached after ~80 minutes of that 1,000-agent stream), 18.8 MiB at most with
 *   ids of the largest size accepted (128 characters).
 */
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';
import { EVENT_ID_WINDOW_MS } from '../../../src-shared/wire/event-codes.ts';

export interface DedupeOptions {
  maxIds?: number;
  windowMs?: number;
}

export const DEFAULT_DEDUPE: Required<DedupeOptions> = {
  maxIds: 100_000,
  windowMs: EVENT_ID_WINDOW_MS,
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
