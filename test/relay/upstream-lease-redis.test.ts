/**
 * The upstream lease's scripts in a real redis-server (src-relay/store/redis-store.ts): taken by
 * one instance at a time, renewed and given back only by its holder, and fencing where the
 * holder's work lands: an event appended with a token that no longer holds the lease (a holder
 * paused past its term, then resumed) is refused, while the new holder's is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisStore } from '../../src-relay/store/redis-store.ts';
import { FencedError, type NewEvent } from '../../src-relay/store/types.ts';
import { sleepReal } from '../../rigs/wait.ts';
import {
  openRedisStore,
  redisAvailable,
  startRedis,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';

const haveRedis = redisAvailable('test/relay/upstream-lease-redis.test.ts');

const event = (id: string): NewEvent => ({
  tenant: 'acme',
  eventId: id,
  event: 30011,
  to: '101',
  body: `{"event_id":"${id}"}`,
  receivedAt: Date.now(),
});

describe.skipIf(!haveRedis)('the upstream lease in Redis', () => {
  let redis: RedisProcess;
  let a: RedisStore;
  let b: RedisStore;

  beforeAll(async () => {
    redis = await startRedis();
    a = await openRedisStore(redis.url, ['acme']);
    b = await openRedisStore(redis.url, ['acme']);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('one holder at a time; renewals and release only by the holder; fencing refuses the old term', async () => {
    const first = await a.acquireLease('acme', 'relay-a', 400);
    expect(first).toMatch(/^relay-a#\d+$/);
    expect(await b.acquireLease('acme', 'relay-b', 400)).toBeNull();
    expect(await b.extendLease('acme', 'relay-b#999', 400)).toBe(false);
    expect(await a.extendLease('acme', first!, 400)).toBe(true);
    expect((await a.appendFenced(event('e-1'), first!)).status).toBe('stored');

    // The holder pauses past its term (no renewal): the lease lapses and b takes it.
    await sleepReal(500);
    const second = await b.acquireLease('acme', 'relay-b', 400);
    expect(second).toMatch(/^relay-b#\d+$/);
    const fence = (t: string) => Number(t.slice(t.indexOf('#') + 1));
    expect(fence(second!)).toBeGreaterThan(fence(first!));

    // a resumes and acts on what it believed: its late write is refused where it lands.
    await expect(a.appendFenced(event('e-2'), first!)).rejects.toBeInstanceOf(FencedError);
    expect(await a.extendLease('acme', first!, 400)).toBe(false);
    await a.releaseLease('acme', first!); // not its lease any more: nothing happens
    expect(await a.acquireLease('acme', 'relay-a', 400)).toBeNull();
    // The new holder's write of the same event is stored (the refused one left no dedupe mark).
    expect((await b.appendFenced(event('e-2'), second!)).status).toBe('stored');
    const stored = await a.readAfter('acme', '0-0', 10);
    expect(stored.events.map((e) => e.eventId)).toEqual(['e-1', 'e-2']);

    await b.releaseLease('acme', second!);
    expect(await a.acquireLease('acme', 'relay-a', 400)).toMatch(/^relay-a#\d+$/);
  });
});
