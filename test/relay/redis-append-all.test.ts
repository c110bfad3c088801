/**
 * A delivery's events stored together on Redis (issue 40 item 4, what costs what): a Yeastar report
 * that carries several envelopes (the answer of a ring group call: the member who answered, and
 * the end of every other member's ring) is one script, one round trip and one fsync, and reaches
 * a desktop in one write with one `cursor` frame, in the order one process decodes it. A real
 * redis-server (started here), the relay in this process, webhooks signed as the PBX signs them.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedStore } from '../../src-relay/gateway/leased-upstream.ts';
import type { RedisStore } from '../../src-relay/store/redis-store.ts';
import { FencedError } from '../../src-relay/store/types.ts';
import type { RelayServer } from '../../src-relay/server.ts';
import { startRelay } from '../../src-relay/server.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { ringGroupCall } from '../../rigs/yeastar-ring-group.ts';
import {
  openRedisStore,
  redisAvailable,
  relayConfig,
  startRedis,
  TestClient,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';

const haveRedis = redisAvailable('test/relay/redis-append-all.test.ts');

/** A webhook Secret as the PBX generates it: 32 characters. */
const SECRET = 'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM';

/**
 * The P-Series' token check, as test/relay/yeastar-webhook.test.ts's stand-in answers it (the
 * token in the query of extension/list; errcode 0 for the one token it knows, 10004 otherwise).
 */
async function startPbx(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pbx');
    const known =
      url.pathname === '/openapi/v1.0/extension/list' &&
      url.searchParams.get('access_token') === 'tok';
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify(
        known
          ? { errcode: 0, errmsg: 'SUCCESS', total_number: 0, data: [] }
          : { errcode: 10004, errmsg: 'TOKEN EXPIRED' },
      ),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describe.skipIf(!haveRedis)(
  'relay on Redis: a delivery of several events',
  { timeout: 30_000 },
  () => {
    let redis: RedisProcess;
    let store: RedisStore;
    let relay: RelayServer;
    let service: Awaited<ReturnType<typeof startPbx>>;

    beforeAll(async () => {
      redis = await startRedis();
      service = await startPbx();
      store = await openRedisStore(redis.url, ['pbx', 'std']);
      relay = await startRelay({
        config: relayConfig({
          pbx: { baseUrl: service.baseUrl, secrets: [SECRET], phoneSystem: 'yeastar-p-series' },
          std: { baseUrl: 'http://127.0.0.1:9', secrets: [SECRET] },
        }),
        store,
        clock: systemClock,
        logger: silentLogger,
      });
    });
    afterAll(async () => {
      await relay?.close();
      await store?.close();
      await service?.close();
      await redis?.stop();
    });

    it('reaches a desktop in one write with one cursor frame, in the decoded order', async () => {
      const desk = await TestClient.connect(relay.clientUrl('pbx'), 'tok', {
        extensions: ['101', '102', '103'],
      });
      try {
        const cursors = () => desk.controls.filter((c) => c.type === 'cursor').length;
        const bodies = ringGroupCall('1700000044.40');
        // The caller, then the three rings: one event per report, each followed by its cursor.
        for (const body of bodies.slice(0, 4)) {
          const res = await fetch(relay.webhookUrl('pbx'), {
            method: 'POST',
            headers: {
              'Content-Type': 'application/json',
              'X-Signature': createHmac('sha256', SECRET).update(body).digest('base64'),
            },
            body,
          });
          expect(res.status).toBe(200);
        }
        await desk.until(() => desk.events.length === 3);
        await desk.until(() => cursors() === 3);
        // 102 answers: one report, three envelopes.
        const answer = bodies[4]!;
        const res = await fetch(relay.webhookUrl('pbx'), {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-Signature': createHmac('sha256', SECRET).update(answer).digest('base64'),
          },
          body: answer,
        });
        expect(await res.json()).toMatchObject({ ok: true, stored: 3 });
        await desk.until(() => desk.events.length === 6);
        await new Promise((r) => setTimeout(r, 300)); // any cursor frame still on its way
        const states = desk.events.slice(3).map((e) => {
          const { data } = JSON.parse(e) as { data: { to: string; state: string } };
          return `${data.to} ${data.state}`;
        });
        expect(states).toEqual(['102 answered', '101 ended', '103 ended']);
        // One hand-over of the three: one write, one cursor frame after them (one per event before).
        expect(cursors()).toBe(4);
        expect(desk.controls.filter((c) => c.type === 'cursor').at(-1)).toMatchObject({
          cursor: desk.cursor,
        });
      } finally {
        await desk.close();
      }
    });

    it('stores each event as one append would: in order, a duplicate marked and not stored again', async () => {
      const at = Date.now();
      const event = (id: string) => ({
        tenant: 'std',
        eventId: id,
        event: 30011,
        to: '101',
        body: `{"event_id":"${id}"}`,
        receivedAt: at,
      });
      expect((await store.append(event('e-2'))).status).toBe('stored');
      const results = await store.appendAll([event('e-1'), event('e-2'), event('e-3')]);
      expect(results.map((r) => r.status)).toEqual(['stored', 'duplicate', 'stored']);
      const { events } = await store.readAfter('std', '0-0', 10);
      expect(events.map((e) => e.eventId)).toEqual(['e-2', 'e-1', 'e-3']);
      expect(events.slice(1).map((e) => e.cursor)).toEqual(
        results.flatMap((r) => (r.status === 'stored' ? [r.cursor] : [])),
      );
      expect(await store.appendAll([])).toEqual([]);
    });

    it("a lease holder's events: stored by one script while its term holds the lease, none once it ended", async () => {
      const at = Date.now();
      const event = (id: string) => ({
        tenant: 'std',
        eventId: id,
        event: 30011,
        to: '102',
        body: `{"event_id":"${id}"}`,
        receivedAt: at,
      });
      const token = await store.acquireLease('std', 'relay-a', 5_000);
      expect(token).not.toBeNull();
      const before = (await store.readAfter('std', '0-0', 100)).events.length;
      const holder = fencedStore(store, () => token!);
      const batches: string[][] = [];
      const unsubscribe = store.subscribe((events) => batches.push(events.map((e) => e.eventId)));
      const results = await holder.appendAll([event('f-1'), event('f-2'), event('f-3')]);
      expect(results.map((r) => r.status)).toEqual(['stored', 'stored', 'stored']);
      // One hand-over of the three to the followers (one append each gave three).
      await store.published(2_000);
      unsubscribe();
      expect(batches).toEqual([['f-1', 'f-2', 'f-3']]);
      // A term that ended (the lease holds another token now): nothing of it is stored.
      const stale = fencedStore(store, () => `${token!}-old`);
      await expect(stale.appendAll([event('f-4'), event('f-5')])).rejects.toBeInstanceOf(
        FencedError,
      );
      const { events } = await store.readAfter('std', '0-0', 100);
      expect(events.slice(before).map((e) => e.eventId)).toEqual(['f-1', 'f-2', 'f-3']);
    });
  },
);
