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
 *
 * Optionally size-aware: given `maxWeight`, each `set` states the value's weight (its estimated
 * bytes, say), `totalWeight` is the sum over the keys held, and the oldest keys are forgotten
 * while it exceeds `maxWeight` (the key just set too, if it is the oldest). Without it no weights
 * are kept (no array, one branch per set).
 */
/** Slots of a new ring; it doubles from here. */
const INITIAL_RING = 64;

export class BoundedFifoMap<V> {
  readonly capacity: number;
  private readonly ttlMs: number;
  /**
   * key -> the sequence number of its slot. The ring holds consecutive sequence numbers from its
   * head, so the slot is found from it; the value is in the ring, not in an object per key (an
   * object per key was ~40 B of each entry: 4 MB of a full event-id set, bench/runner-caches.ts).
   */
  private readonly seqs = new Map<string, number>();
  private ringKeys: Array<string | undefined>;
  private ringValues: Array<V | undefined>;
  private ringTimes: Float64Array;
  private ringSeqs: Float64Array;
  /** Each slot's weight, only when a `maxWeight` was given. */
  private ringWeights: Float64Array | undefined;
  private readonly maxWeight: number;
  private weight = 0;
  private head = 0;
  private count = 0;
  private seq = 0;

  constructor(capacity: number, ttlMs: number, maxWeight?: number) {
    this.capacity = Math.max(1, Math.floor(capacity));
    this.ttlMs = ttlMs;
    const first = Math.min(this.capacity, INITIAL_RING);
    this.ringKeys = new Array<string | undefined>(first).fill(undefined);
    this.ringValues = new Array<V | undefined>(first).fill(undefined);
    this.ringTimes = new Float64Array(first);
    this.ringSeqs = new Float64Array(first);
    this.maxWeight = maxWeight ?? Infinity;
    if (maxWeight !== undefined) this.ringWeights = new Float64Array(first);
  }

  /** The sum of the weights of the keys held (0 without a `maxWeight`). */
  get totalWeight(): number {
    return this.weight;
  }

  /** Slots in the ring now (it grows to `capacity` as keys arrive). */
  get ringSize(): number {
    return this.ringTimes.length;
  }

  get size(): number {
    return this.seqs.size;
  }

  get(key: string, now: number): V | undefined {
    this.expire(now);
    const seq = this.seqs.get(key);
    return seq === undefined ? undefined : this.ringValues[this.slotOf(seq)];
  }

  has(key: string, now: number): boolean {
    this.expire(now);
    return this.seqs.has(key);
  }

  /** `weight` counts only when the map was given a `maxWeight`. */
  set(key: string, value: V, now: number, weight = 0): void {
    this.expire(now);
    const existing = this.seqs.get(key);
    if (existing !== undefined) {
      const slot = this.slotOf(existing);
      this.ringValues[slot] = value;
      if (this.ringWeights) this.reweigh(slot, weight);
      return;
    }
    if (this.count === this.ringTimes.length && this.count - this.seqs.size >= this.count / 4)
      this.compact(); // a quarter of the ring is deleted keys: reuse their slots
    if (this.count === this.capacity) this.evictHead();
    else if (this.count === this.ringTimes.length) this.grow();
    const slot = (this.head + this.count) % this.ringTimes.length;
    const seq = ++this.seq;
    this.ringKeys[slot] = key;
    this.ringValues[slot] = value;
    this.ringTimes[slot] = now;
    this.ringSeqs[slot] = seq;
    this.count++;
    this.seqs.set(key, seq);
    if (this.ringWeights) this.reweigh(slot, weight);
  }

  delete(key: string): void {
    // The ring slot stays until it reaches the head; its seq no longer matches, so it is skipped.
    const seq = this.seqs.get(key);
    if (seq === undefined) return;
    const slot = this.slotOf(seq);
    this.ringValues[slot] = undefined;
    if (this.ringWeights) {
      this.weight -= this.ringWeights[slot]!;
      this.ringWeights[slot] = 0;
    }
    this.seqs.delete(key);
  }

  /** A held slot's weight set; the oldest keys out while the total is over `maxWeight`. */
  private reweigh(slot: number, weight: number): void {
    const weights = this.ringWeights!;
    const w = Number.isFinite(weight) && weight > 0 ? weight : 0;
    this.weight += w - weights[slot]!;
    weights[slot] = w;
    while (this.weight > this.maxWeight && this.count > 0) this.evictHead();
  }

  /** The slot of a held key: the ring's sequence numbers are consecutive from its head. */
  private slotOf(seq: number): number {
    return (this.head + (seq - this.ringSeqs[this.head]!)) % this.ringTimes.length;
  }

  private expire(now: number): void {
    const cutoff = now - this.ttlMs;
    while (this.count > 0 && (this.ringTimes[this.head] ?? 0) < cutoff) this.evictHead();
  }

  private evictHead(): void {
    const key = this.ringKeys[this.head];
    if (key !== undefined && this.seqs.get(key) === this.ringSeqs[this.head]) this.seqs.delete(key);
    if (this.ringWeights) {
      this.weight -= this.ringWeights[this.head]!;
      this.ringWeights[this.head] = 0;
    }
    this.ringKeys[this.head] = undefined;
    this.ringValues[this.head] = undefined;
    this.head = (this.head + 1) % this.ringTimes.length;
    this.count--;
  }

  /**
   * The ring without its deleted keys' slots, the held keys oldest first from 0, renumbered (their
   * sequence numbers must be consecutive from the head). Only when a quarter of a full ring is
   * deleted keys, so its cost is spread over as many sets: without it a key deleted after a long-held
   * one kept its slot until the held one reached the head, and a full ring of such slots pushed out
   * the held key while the map held few.
   */
  private compact(): void {
    const size = this.ringTimes.length;
    const keys = new Array<string | undefined>(size).fill(undefined);
    const values = new Array<V | undefined>(size).fill(undefined);
    const times = new Float64Array(size);
    const seqs = new Float64Array(size);
    const weights = this.ringWeights ? new Float64Array(size) : undefined;
    let to = 0;
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % size;
      const key = this.ringKeys[from];
      if (key === undefined || this.seqs.get(key) !== this.ringSeqs[from]) continue;
      const seq = ++this.seq;
      keys[to] = key;
      values[to] = this.ringValues[from];
      times[to] = this.ringTimes[from]!;
      seqs[to] = seq;
      if (weights) weights[to] = this.ringWeights![from]!;
      this.seqs.set(key, seq);
      to++;
    }
    this.ringKeys = keys;
    this.ringValues = values;
    this.ringTimes = times;
    this.ringSeqs = seqs;
    this.ringWeights = weights;
    this.head = 0;
    this.count = to;
  }

  /** A ring twice as large (at most `capacity`), its slots oldest first from 0. */
  private grow(): void {
    const size = this.ringTimes.length;
    const larger = Math.min(this.capacity, size * 2);
    const keys = new Array<string | undefined>(larger).fill(undefined);
    const values = new Array<V | undefined>(larger).fill(undefined);
    const times = new Float64Array(larger);
    const seqs = new Float64Array(larger);
    const weights = this.ringWeights ? new Float64Array(larger) : undefined;
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % size;
      keys[i] = this.ringKeys[from];
      values[i] = this.ringValues[from];
      times[i] = this.ringTimes[from]!;
      seqs[i] = this.ringSeqs[from]!;
      if (weights) weights[i] = this.ringWeights![from]!;
    }
    this.ringWeights = weights;
    this.ringKeys = keys;
    this.ringValues = values;
    this.ringTimes = times;
    this.ringSeqs = seqs;
    this.head = 0;
  }
}
