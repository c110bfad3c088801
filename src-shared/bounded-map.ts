/**
 * A map with a hard memory bound, forgetting in insertion order: at most `capacity` keys, none kept
 * longer than `ttlMs` after it was first set. Eviction walks a ring of keys, never the Map itself:
 * iterating a V8 Map from its oldest entry after many deletions skips the deleted slots one by one,
 * which made a Map-only version cost ~170 µs per event at 100,000 entries. The ring starts small
 * and doubles when full, up to `capacity`: memory follows what is held, not the bound (a ring
 * preallocated for 100,000 keys held 2.4 MB from the first second of every process).
 *
 * Updating an existing key keeps its place (first-set order, not LRU), so a key's lifetime is
 * bounded from its first use.
 */
/** Slots of a new ring; it doubles from here. */
const INITIAL_RING = 64;

export class BoundedFifoMap<V> {
  readonly capacity: number;
  private readonly ttlMs: number;
  private readonly values = new Map<string, { value: V; seq: number }>();
  private ringKeys: Array<string | undefined>;
  private ringTimes: Float64Array;
  private ringSeqs: Float64Array;
  private head = 0;
  private count = 0;
  private seq = 0;

  constructor(capacity: number, ttlMs: number) {
    this.capacity = Math.max(1, Math.floor(capacity));
    this.ttlMs = ttlMs;
    const first = Math.min(this.capacity, INITIAL_RING);
    this.ringKeys = new Array<string | undefined>(first).fill(undefined);
    this.ringTimes = new Float64Array(first);
    this.ringSeqs = new Float64Array(first);
  }

  /** Slots in the ring now (it grows to `capacity` as keys arrive). */
  get ringSize(): number {
    return this.ringTimes.length;
  }

  get size(): number {
    return this.values.size;
  }

  get(key: string, now: number): V | undefined {
    this.expire(now);
    return this.values.get(key)?.value;
  }

  has(key: string, now: number): boolean {
    this.expire(now);
    return this.values.has(key);
  }

  set(key: string, value: V, now: number): void {
    this.expire(now);
    const existing = this.values.get(key);
    if (existing) {
      existing.value = value;
      return;
    }
    if (this.count === this.capacity) this.evictHead();
    else if (this.count === this.ringTimes.length) this.grow();
    const slot = (this.head + this.count) % this.ringTimes.length;
    const seq = ++this.seq;
    this.ringKeys[slot] = key;
    this.ringTimes[slot] = now;
    this.ringSeqs[slot] = seq;
    this.count++;
    this.values.set(key, { value, seq });
  }

  delete(key: string): void {
    // The ring slot stays until it reaches the head; its seq no longer matches, so it is skipped.
    this.values.delete(key);
  }

  private expire(now: number): void {
    const cutoff = now - this.ttlMs;
    while (this.count > 0 && (this.ringTimes[this.head] ?? 0) < cutoff) this.evictHead();
  }

  private evictHead(): void {
    const key = this.ringKeys[this.head];
    if (key !== undefined && this.values.get(key)?.seq === this.ringSeqs[this.head])
      this.values.delete(key);
    this.ringKeys[this.head] = undefined;
    this.head = (this.head + 1) % this.ringTimes.length;
    this.count--;
  }

  /** A ring twice as large (at most `capacity`), its slots oldest first from 0. */
  private grow(): void {
    const size = this.ringTimes.length;
    const larger = Math.min(this.capacity, size * 2);
    const keys = new Array<string | undefined>(larger).fill(undefined);
    const times = new Float64Array(larger);
    const seqs = new Float64Array(larger);
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % size;
      keys[i] = this.ringKeys[from];
      times[i] = this.ringTimes[from]!;
      seqs[i] = this.ringSeqs[from]!;
    }
    this.ringKeys = keys;
    this.ringTimes = times;
    this.ringSeqs = seqs;
    this.head = 0;
  }
}
