import { describe, expect, it } from 'vitest';
import { BoundedFifoMap } from '../../src-shared/kit/bounded-map.ts';

describe('BoundedFifoMap', () => {
  it('holds a small ring while few keys are held, whatever the bound', () => {
    const map = new BoundedFifoMap<number>(100_000, 60_000);
    map.set('a', 1, 0);
    expect(map.ringSize).toBeLessThanOrEqual(64);
    expect(map.get('a', 0)).toBe(1);
  });

  it('grows the ring as keys arrive, keeping first-set order across the growth', () => {
    const map = new BoundedFifoMap<number>(1_000, 60_000);
    // Wrap the first ring (evictions by age move its head) before it grows.
    for (let i = 0; i < 40; i++) map.set(`old-${i}`, i, i);
    for (let i = 0; i < 40; i++) map.set(`k-${i}`, i, 1_000 + i);
    expect(map.get('old-0', 60_040)).toBeUndefined(); // older than the ttl
    for (let i = 40; i < 500; i++) map.set(`k-${i}`, i, 60_040);
    expect(map.ringSize).toBeGreaterThanOrEqual(500);
    expect(map.ringSize).toBeLessThanOrEqual(1_000);
    for (let i = 0; i < 500; i++) expect(map.get(`k-${i}`, 60_040)).toBe(i);
    // The oldest go first: k-0 was set at 1,000, k-39 at 1,039.
    expect(map.get('k-0', 61_001)).toBeUndefined();
    expect(map.get('k-39', 61_001)).toBe(39);
  });

  it('never holds more than its capacity, forgetting the first set', () => {
    const map = new BoundedFifoMap<number>(100, 60_000);
    for (let i = 0; i < 1_000; i++) map.set(`k-${i}`, i, i);
    expect(map.size).toBe(100);
    expect(map.ringSize).toBe(100);
    expect(map.has('k-899', 1_000)).toBe(false);
    expect(map.has('k-900', 1_000)).toBe(true);
    expect(map.has('k-999', 1_000)).toBe(true);
  });

  it('finds every value after the ring wrapped and grew, with keys deleted and set again', () => {
    const map = new BoundedFifoMap<number>(300, 100);
    const expected = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) {
      const now = Math.floor(i / 10); // ten keys a tick: the ttl of 100 keeps ~1,000, the bound 300
      map.set(`k-${i}`, i, now);
      expected.set(`k-${i}`, i);
      if (i % 7 === 0) {
        map.delete(`k-${i - 3}`);
        expected.delete(`k-${i - 3}`);
      }
      if (i % 11 === 0 && expected.has(`k-${i - 5}`)) {
        map.set(`k-${i - 5}`, -i, now); // a new value, in the same place
        expected.set(`k-${i - 5}`, -i);
      }
      if (i % 97 === 0) {
        let held = 0;
        for (const [key, value] of expected) {
          const got = map.get(key, now);
          if (got !== undefined) {
            expect(got).toBe(value);
            held++;
          }
        }
        expect(held).toBe(map.size);
      }
    }
    expect(map.size).toBeGreaterThan(250);
    expect(map.ringSize).toBe(300);
  });

  it('keeps a key set again in its first place, and forgets a deleted one', () => {
    const map = new BoundedFifoMap<string>(4, 60_000);
    map.set('a', 'first', 0);
    map.set('b', 'b', 1);
    map.set('a', 'again', 2);
    map.delete('b');
    map.set('c', 'c', 3);
    map.set('d', 'd', 4);
    expect(map.get('a', 5)).toBe('again');
    map.set('e', 'e', 5); // the ring is full, but of 3 keys and b's slot: b's slot is reused
    expect(map.has('a', 5)).toBe(true);
    expect(map.has('b', 5)).toBe(false);
    map.set('f', 'f', 6); // 4 keys held: 'a' was first set, so it goes first
    expect(map.has('a', 6)).toBe(false);
    expect([...'cdef'].every((k) => map.get(k, 6) === k)).toBe(true);
  });

  it('reuses the slots of deleted keys: a long-held key outlives many set and deleted after it', () => {
    const map = new BoundedFifoMap<number>(100, 60_000);
    map.set('long', 1, 0);
    for (let i = 0; i < 10_000; i++) {
      map.set(`short-${i}`, i, 1);
      if (i % 200 !== 0) map.delete(`short-${i}`); // most end soon; 50 stay
    }
    expect(map.get('long', 2)).toBe(1); // 51 keys held: never past the capacity
    expect(map.size).toBe(51);
    expect(map.get('short-9800', 2)).toBe(9800);
  });

  it('keeps the total weight under maxWeight, forgetting the first set, and counts re-sets, deletes and expiry', () => {
    const map = new BoundedFifoMap<string>(1_000, 60_000, 100);
    for (let i = 0; i < 10; i++) map.set(`k-${i}`, 'v', i, 10);
    expect(map.totalWeight).toBe(100);
    map.set('k-10', 'v', 10, 25); // 125 > 100: k-0, k-1 and k-2 go
    expect(map.totalWeight).toBe(95);
    expect(map.has('k-2', 10)).toBe(false);
    expect(map.has('k-3', 10)).toBe(true);
    map.set('k-5', 'w', 10, 40); // a re-set weighs anew: 125, so k-3 to k-5 go (k-5 was older)
    expect(map.totalWeight).toBeLessThanOrEqual(100);
    expect(map.has('k-3', 10)).toBe(false);
    map.delete('k-10');
    expect(map.totalWeight).toBe(map.size * 10);
    // Grown past its first ring, then aged out: nothing held, nothing weighed.
    for (let i = 0; i < 200; i++) map.set(`g-${i}`, 'v', 20, 0.5);
    expect(map.totalWeight).toBeLessThanOrEqual(100);
    expect(map.get('g-0', 70_000)).toBeUndefined();
    expect(map.totalWeight).toBe(0);
  });

  it('keeps no weights without maxWeight', () => {
    const map = new BoundedFifoMap<number>(10, 60_000);
    map.set('a', 1, 0, 1e9);
    expect(map.totalWeight).toBe(0);
    expect(map.get('a', 0)).toBe(1);
  });
});
