import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import type { NewEvent } from '../../src-relay/store/types.ts';
import { redisAvailable, startRedis, type RedisProcess } from '../../rigs/relay/helpers.ts';

// storage.minReplicas (Redis WAIT) against a real primary and replica: the replica paused
// (SIGSTOP) stands for one that has not received the event yet.
const haveRedis = redisAvailable('test/relay/redis-replicas.test.ts');

describe.skipIf(!haveRedis)('storage.minReplicas', () => {
  let primary: RedisProcess;
  let replica: RedisProcess;
  let store: RedisStore;

  beforeAll(async () => {
    primary = await startRedis();
    replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    store = new RedisStore({
      storage: {
        kind: 'redis',
        url: primary.url,
        commandTimeoutMs: 2_000,
        minReplicas: 1,
        replicaTimeoutMs: 300,
        upstreamLeaseMs: 10_000,
      },
      tenants: ['acme'],
      clock: systemClock,
      logger: silentLogger,
      blockMs: 500,
    });
    await store.open();
  }, 20_000);
  afterAll(async () => {
    await store?.close();
    await replica?.stop();
    await primary?.stop();
  });

  const event = (id: string): NewEvent => ({
    tenant: 'acme',
    eventId: id,
    event: 30011,
    to: '101',
    body: `{"event_id":"${id}"}`,
    receivedAt: Date.now(),
  });

  it('a webhook is acknowledged only once a replica has it, and so is its retry (a duplicate)', async () => {
    // The replica in sync: a first event is acknowledged.
    const first = Date.now() + 10_000;
    for (;;) {
      const r = await store.append(event('warm-up')).then(
        (x) => x.status,
        () => 'failed',
      );
      if (r !== 'failed') break;
      if (Date.now() > first) throw new Error('the replica never confirmed');
    }
    process.kill(replica.pid, 'SIGSTOP');
    try {
      await expect(store.append(event('cut-1'))).rejects.toThrow(/0 of 1 replicas/);
      // The service's retry: the event is stored on the primary (its marker too), but no replica
      // has it, so the duplicate is not acknowledged either.
      await expect(store.append(event('cut-1'))).rejects.toThrow(/0 of 1 replicas/);
    } finally {
      process.kill(replica.pid, 'SIGCONT');
    }
    // The replica back: the next retry is a duplicate, acknowledged.
    const deadline = Date.now() + 10_000;
    let status = 'failed';
    while (status === 'failed' && Date.now() < deadline)
      status = await store.append(event('cut-1')).then(
        (x) => x.status,
        () => 'failed',
      );
    expect(status).toBe('duplicate');
    expect(store.storageHealth().waitFailures).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('webhooks waiting for a replica do not hold up the upstream lease, its tokens or the call memory (their own connection)', async () => {
    // A Redis Cluster failover leaves the promoted primary without a replica until the killed node
    // is back (test/blackbox/relay-gateway-failover-redis-cluster.test.ts): every append's WAIT
    // then runs to replicaTimeoutMs, and a client blocked in WAIT has none of its later commands
    // served. Ten webhooks at once, then the lease holder's renewal, another instance's ask, the
    // holder writing down its token, and a Yeastar report's call memory read.
    const held = await store.acquireLease('acme', 'holder', 10_000);
    expect(held).toBeTypeOf('string');
    process.kill(replica.pid, 'SIGSTOP');
    try {
      const appends = Array.from({ length: 10 }, (_, i) =>
        store.append(event(`queued-${i}`)).catch((e: Error) => e),
      );
      await new Promise((r) => setTimeout(r, 20)); // the appends are on the wire first
      const started = Date.now();
      const [extended, other, token, memory] = await Promise.all([
        store.extendLease('acme', held!, 10_000).catch((e: Error) => e),
        store.acquireLease('acme', 'other', 10_000).catch((e: Error) => e),
        store.recordTermToken('acme', 'field-1', 'sealed-1', Date.now() + 60_000, Date.now()).then(
          () => 'written',
          (e: Error) => e,
        ),
        store.callMemory.read('acme', '1795.1').then(
          (r) => r.memory,
          (e: Error) => e,
        ),
      ]);
      const ms = Date.now() - started;
      await Promise.all(appends);
      expect({ extended, other, token, memory, slow: ms > 1_000 }).toEqual({
        extended: true,
        other: null,
        token: 'written',
        memory: null,
        slow: false,
      });
    } finally {
      process.kill(replica.pid, 'SIGCONT');
    }
    await store.releaseLease('acme', held!);
  }, 30_000);
});
