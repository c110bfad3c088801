/**
 * The relay's one rate limit (src-relay/token-bucket.ts), which the frames a client sends and the
 * refusals an address may cause both use (they were two hand-written buckets).
 */
import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src-relay/token-bucket.ts';
import { RefusalBudget } from '../../src-relay/refusal-budget.ts';

describe('TokenBucket', () => {
  it('gives a burst of its capacity, then refills at its rate, never above its capacity', () => {
    let now = 0;
    const bucket = new TokenBucket(3, 60, () => now); // 1 a second
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    now += 999;
    expect(bucket.take()).toBe(false);
    now += 1;
    expect(bucket.take()).toBe(true);
    now += 60_000;
    expect(bucket.level()).toBe(3);
    expect(bucket.isFull()).toBe(true);
  });

  it('spend() runs into debt, which takes its time to refill', () => {
    let now = 0;
    const bucket = new TokenBucket(1, 60, () => now);
    bucket.spend();
    bucket.spend();
    expect(bucket.level()).toBe(-1);
    now += 1_999;
    expect(bucket.take()).toBe(false);
    now += 1;
    expect(bucket.take()).toBe(true);
  });
});

describe('RefusalBudget on the bucket', () => {
  it('allows as many refusals a minute as configured, per address, and forgets a full bucket', () => {
    let now = 0;
    const budget = new RefusalBudget(2, () => now);
    budget.spend('a');
    budget.spend('a');
    expect(budget.allows('a')).toBe(false);
    expect(budget.allows('b')).toBe(true);
    now += 30_000;
    expect(budget.left('a')).toBe(1);
    now += 30_000;
    expect(budget.left('a')).toBe(2);
  });
});
