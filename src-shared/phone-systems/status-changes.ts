/**
 * When a status report's status began, for event ids made from content (trunk registration and
 * presence reports of a phone system whose reports carry no id and no time: Yeastar P-Series).
 *
 * A report that repeats the status a trunk or an extension already has carries no new fact: it
 * gets the id of the report that first said so, and the dedupe (the app's, the relay's store)
 * keeps one. A delivery captured and sent again (the vendor's webhook signature has no time in it)
 * then stores nothing, where an id made from the time received stored every copy: 400 copies of
 * one trunk report pushed a real ring out of a relay's retention. A status that comes back after
 * another (a trunk down again tomorrow) is a change, with a new id from the time it was seen.
 *
 * Bounded: `capacity` keys (trunks and extensions of the tenants a decoder serves), each forgotten
 * `ttlMs` after its status began; a status forgotten that way is a change once more (one more
 * event stored, which the core, notifying only on a change, does not show twice).
 */
import { BoundedFifoMap } from '../kit/bounded-map.ts';

/** Trunks and extensions remembered: a P-Series serves at most a few thousand extensions. */
export const MAX_STATUS_KEYS = 20_000;
/** How long a status is remembered after it began (a day: its repeats within it are one event). */
export const STATUS_TTL_MS = 24 * 3600_000;

export class StatusChanges {
  private readonly last: BoundedFifoMap<{ status: string; since: number }>;

  constructor(capacity = MAX_STATUS_KEYS, ttlMs = STATUS_TTL_MS) {
    this.last = new BoundedFifoMap(capacity, ttlMs);
  }

  /**
   * The time the current status of `key` was first seen: `stamp` for a change (or a key not
   * known), the earlier time for a repeat. `now` is the monotonic clock of the memory bound.
   */
  since(key: string, status: string, stamp: number, now: number): number {
    const known = this.last.get(key, now);
    if (known?.status === status) return known.since;
    // Set anew, not updated in place, so that the time bound runs from the change.
    this.last.delete(key);
    this.last.set(key, { status, since: stamp }, now);
    return stamp;
  }
}
