/**
 * Issue 40 item 3, found by test/blackbox/relay-gateway-failover-redis-cluster.test.ts (3 runs of
 * 7 on 2026-11-28): the shared Yeastar call memory is written (compare-and-set) before the
 * report's envelopes are appended, by a second command. When the append fails after the memory
 * was written (in a failover: a pipeline answered MOVED or CLUSTERDOWN, a command timed out, a
 * holder fenced between the two) and another report of the call is decoded before the failed one
 * is retried, the retry is decoded against a memory that already holds its effect: what only
 * that decode emits (the answer's end of the colleagues' rings, `ended` with no member status) is
 * never stored. One process emits it once.
 *
 * Here the append is made to fail by a fault that leaves the call memory alone: the tenant's
 * stream key holds a string for the time of two reports (XADD answers WRONGTYPE, 503), as a
 * failover's failed appends would. Fixed by keeping, in the shared memory, the events each recent
 * report of the call decoded to (yeastar-intake.ts): the retried answer gets its first decode's
 * events back. On the old intake (main 4f3c4b9) the second test failed: 101 told
 * ["ringing","ended"], 103 ["ringing","ended"]; one process: ["ringing","ended","ended"].
 */
import { createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisStore } from '../../src-relay/store/redis-store.ts';
import type { EventStore } from '../../src-relay/store/types.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { ringGroupCall } from '../../rigs/yeastar-ring-group.ts';
import {
  openRedisStore,
  redisAvailable,
  relayConfig,
  startMemoryRelay,
  startRedis,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';

const haveRedis = redisAvailable('test/relay/yeastar-memory-append-redis.test.ts');
const SECRET = 'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM'; // 32 characters, as the PBX generates it
const CALL = '1700000004.40';
/** ALERT, 101/102/103 RING, 102 ANSWER (4), inbound ANSWERED (5), the BYEs, the record. */
const SEQUENCE = ringGroupCall(CALL);

const config = () =>
  relayConfig({
    acme: { baseUrl: 'http://127.0.0.1:9', secrets: [SECRET], phoneSystem: 'yeastar-p-series' },
  });

async function deliver(relay: RelayServer, body: string): Promise<number> {
  const res = await fetch(relay.webhookUrl('acme'), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Signature': createHmac('sha256', SECRET).update(body).digest('base64'),
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/** What extension `to` was told of the call, in order. */
async function statesAt(store: EventStore, to: string): Promise<unknown[]> {
  const { events } = await store.readAfter('acme', '0-0', 10_000);
  return events
    .map((e) => JSON.parse(String(e.body)) as { event: number; data: Record<string, unknown> })
    .filter((e) => e.event === 30011 && e.data.call_id === CALL && e.data.to === to)
    .map((e) => e.data.state);
}

describe.skipIf(!haveRedis)(
  'a Yeastar report whose append failed after its call memory was written',
  () => {
    let redis: RedisProcess;
    let admin: Redis;
    let store: RedisStore;
    let relay: RelayServer;

    beforeAll(async () => {
      redis = await startRedis();
      admin = new Redis(redis.url);
      store = await openRedisStore(redis.url, ['acme']);
      relay = await startRelay({
        config: config(),
        store,
        clock: systemClock,
        logger: silentLogger,
      });
    });
    afterAll(async () => {
      await relay?.close();
      admin?.disconnect();
      await redis?.stop();
    });

    /** What the first test saw: the webhooks' answers and what each extension was told. */
    let run:
      | {
          failed: number[];
          retried: number[];
          oneProcess: unknown[];
          at101: unknown[];
          at103: unknown[];
        }
      | undefined;

    it("the fault: the answer's append fails (503) after its memory was written, the next report decodes (200), the answer retried (200)", async () => {
      // One process (the memory store): 101 and 103 ring, end at 102's answer, then at their BYE.
      const memory = await startMemoryRelay(config());
      let oneProcess: unknown[];
      try {
        for (const body of SEQUENCE) expect(await deliver(memory.relay, body)).toBe(200);
        oneProcess = await statesAt(memory.store, '101');
      } finally {
        await memory.relay.close();
      }
      for (const body of SEQUENCE.slice(0, 4)) expect(await deliver(relay, body)).toBe(200);
      const key = store.streamKey('acme');
      await admin.rename(key, `${key}:aside`);
      await admin.set(key, 'not a stream');
      // The answer (envelopes: 102 answered, 101 and 103 ended): 503. The caller's ANSWERED (no
      // envelope): decoded, 200.
      const failed = [await deliver(relay, SEQUENCE[4]!), await deliver(relay, SEQUENCE[5]!)];
      await admin.del(key);
      await admin.rename(`${key}:aside`, key);
      // The PBX retries the answer, then the call goes on.
      const retried = [await deliver(relay, SEQUENCE[4]!)];
      for (const body of SEQUENCE.slice(6)) retried.push(await deliver(relay, body));
      run = {
        failed,
        retried,
        oneProcess,
        at101: await statesAt(store, '101'),
        at103: await statesAt(store, '103'),
      };
      console.log(
        `append failed after the memory was written: webhooks ${failed.join(', ')}, then ${retried.join(', ')}; 101 told ${JSON.stringify(run.at101)}, 103 ${JSON.stringify(run.at103)}; one process: ${JSON.stringify(oneProcess)}`,
      );
      expect(oneProcess).toEqual(['ringing', 'ended', 'ended']);
      expect(failed).toEqual([503, 200]);
      expect(retried.every((s) => s === 200)).toBe(true);
    });

    // The retried answer is not decoded again against a memory that already ended 101's and 103's
    // rings (which yields no `ended`): it gets the events its first decode stored in the memory.
    it('the colleagues’ rings still end at the answer, as in one process', () => {
      expect(run).toBeDefined();
      expect({ at101: run!.at101, at103: run!.at103 }).toEqual({
        at101: run!.oneProcess,
        at103: run!.oneProcess,
      });
    });
  },
);
