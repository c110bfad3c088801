import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import { redisAvailable, startRedis, type RedisProcess } from '../../rigs/relay/helpers.ts';
import {
  sentinelAvailable,
  startLoneSentinel,
  startSentinelGroup,
  type SentinelGroup,
} from '../../rigs/relay/sentinel-support.ts';

// Real processes: a primary, its replica and three sentinels, and a fourth sentinel, listed first,
// that names another server (a Redis that says it is a primary, as an old primary restarted after
// a failover does, to a sentinel not yet told of the failover). ioredis connects to what the
// first sentinel that answers names; the store must write only where a majority of them point.
const file = 'test/relay/redis-sentinel-quorum.test.ts';
const haveAll = redisAvailable(file) && sentinelAvailable(file);

describe.skipIf(!haveAll)('Redis Sentinel: the primary a majority names', () => {
  let group: SentinelGroup;
  let stray: RedisProcess;
  let lone: Awaited<ReturnType<typeof startLoneSentinel>>;
  beforeAll(async () => {
    group = await startSentinelGroup();
    stray = await startRedis();
    lone = await startLoneSentinel(group.name, stray.port);
  }, 30_000);
  afterAll(async () => {
    await lone?.stop();
    await stray?.stop();
    await group?.stop();
  }, 30_000);

  it('nothing is written to a server one sentinel names against the others', async () => {
    const store = new RedisStore({
      storage: {
        kind: 'redis',
        sentinel: { name: group.name, nodes: [lone.address, ...group.sentinels] },
        minReplicas: 0,
        replicaTimeoutMs: 500,
        commandTimeoutMs: 1_000,
        upstreamLeaseMs: 10_000,
      },
      keyPrefix: 'q:',
      tenants: ['acme'],
      clock: systemClock,
      logger: silentLogger,
      commandTimeoutMs: 1_000,
    });
    const opened = await store.open().then(
      () => null,
      (err: Error) => err,
    );
    const appended = opened
      ? opened
      : await store
          .append({
            tenant: 'acme',
            eventId: 'q-1',
            event: 30011,
            to: null,
            receivedAt: 1,
            body: '{}',
          })
          .then(
            (r) => r.status,
            (err: Error) => err.message,
          );
    await store.close();
    const onStray = new Redis({ port: stray.port, host: '127.0.0.1' });
    const strayLength = await onStray.xlen('q:{acme}:events');
    onStray.disconnect();
    // Old code: the store connected to the stray server and stored the event there (1).
    expect(strayLength, `append answered ${String(appended)}`).toBe(0);
    expect(String(appended)).toMatch(/sentinels/);
    expect(store.storageHealth().unconfirmedPrimaries).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
