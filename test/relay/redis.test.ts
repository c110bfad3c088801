import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelayServer } from '../../src-relay/server.ts';
import type { EventStore } from '../../src-relay/store/types.ts';
import {
  SECRET,
  TestClient,
  envelope,
  openRedisStore,
  postWebhook,
  redisAvailable,
  relayConfig,
  signed,
  startRedis,
  startRedisRelay,
  startTokenService,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';

// Redis is a real dependency here: the test starts its own redis-server (AOF, fsync always) on a
// free port. Without redis-server these tests are skipped locally, and fail on CI (CI=true).
const haveRedis = redisAvailable('test/relay/redis.test.ts');

describe.skipIf(!haveRedis)('Redis Streams backend', () => {
  let redis: RedisProcess;
  let service: Awaited<ReturnType<typeof startTokenService>>;
  // Each tenant has its own service (base URL), as the relay's config requires.
  let globexService: Awaited<ReturnType<typeof startTokenService>>;
  const open: { relay: RelayServer; store: EventStore }[] = [];
  const clients: TestClient[] = [];

  const config = () =>
    relayConfig({
      acme: { baseUrl: service.baseUrl, secrets: [SECRET] },
      globex: { baseUrl: globexService.baseUrl, secrets: ['globex-secret-1'] },
    });
  const instance = async (port = 0) => {
    const c = config();
    c.port = port;
    const pair = await startRedisRelay(c, redis.url);
    open.push(pair);
    return pair;
  };
  const stopInstance = async (pair: { relay: RelayServer; store: EventStore }) => {
    await pair.relay.close();
    await pair.store.close();
    open.splice(open.indexOf(pair), 1);
  };

  beforeAll(async () => {
    redis = await startRedis();
    service = await startTokenService(new Set(['tok']));
    globexService = await startTokenService(new Set(['globex-tok']));
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const p of [...open]) await stopInstance(p);
    await service?.close();
    await globexService?.close();
    await redis?.stop();
  });

  it('two instances on one Redis: a webhook posted to A reaches a client on B, dedupe is shared', async () => {
    const a = await instance();
    const b = await instance();
    const client = await TestClient.connect(b.relay.clientUrl('acme'), 'tok', {
      extensions: ['101'],
    });
    clients.push(client);
    const body = envelope({ event_id: 'x-instance-1' });
    expect((await postWebhook(a.relay.webhookUrl('acme'), body, signed(body))).status).toBe(200);
    await client.until(() => client.events.length === 1);
    expect(client.events[0]).toBe(body);
    // The same delivery retried against the other instance is a duplicate there too.
    expect((await postWebhook(b.relay.webhookUrl('acme'), body, signed(body))).status).toBe(200);
    const dups = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        postWebhook((i % 2 ? a : b).relay.webhookUrl('acme'), body, signed(body)),
      ),
    );
    expect(dups.every((r) => r.status === 200)).toBe(true);
    await sleepReal(300);
    expect(client.eventIds()).toEqual(['x-instance-1']);
    expect(a.relay.metrics.stored + b.relay.metrics.stored).toBe(1);
    expect((await fetch(b.relay.url + '/readyz')).status).toBe(200);
  });

  it('keeps tenants apart: a tenant A client never receives tenant B events', async () => {
    const [a] = open;
    const acme = await TestClient.connect(a!.relay.clientUrl('acme'), 'tok', {
      extensions: ['101'],
      events: [30009, 30011],
    });
    const globex = await TestClient.connect(a!.relay.clientUrl('globex'), 'globex-tok', {
      extensions: ['101'],
      events: [30009, 30011],
    });
    clients.push(acme, globex);
    const forGlobex = envelope({ event_id: 'g-only', tenant: 'globex' });
    expect(
      (
        await postWebhook(
          a!.relay.webhookUrl('globex'),
          forGlobex,
          signed(forGlobex, 'globex-secret-1'),
        )
      ).status,
    ).toBe(200);
    // Signed with acme's secret but posted to globex: refused.
    const crossSigned = envelope({ event_id: 'g-cross', tenant: 'globex' });
    expect(
      (await postWebhook(a!.relay.webhookUrl('globex'), crossSigned, signed(crossSigned))).status,
    ).toBe(401);
    const forAcme = envelope({ event_id: 'a-only' });
    expect((await postWebhook(a!.relay.webhookUrl('acme'), forAcme, signed(forAcme))).status).toBe(
      200,
    );
    await globex.until(() => globex.events.length === 1);
    await acme.until(() => acme.events.length === 1);
    await sleepReal(200);
    expect(acme.eventIds()).toEqual(['a-only']);
    expect(globex.eventIds()).toEqual(['g-only']);
  });

  it('relay and Redis restart: every accepted webhook still reaches the client', async () => {
    let a = open[0]!;
    const client = await TestClient.connect(a.relay.clientUrl('acme'), 'tok', {
      extensions: ['555'],
    });
    clients.push(client);
    const startCursor = client.cursor;
    const accepted: string[] = [];
    const refused: string[] = [];
    const postOne = async (pair: { relay: RelayServer }, id: string) => {
      const body = envelope({ event_id: id, to: '555' });
      let status = 0;
      try {
        status = (await postWebhook(pair.relay.webhookUrl('acme'), body, signed(body))).status;
      } catch {
        // connection refused once the instance stopped listening: the service retries
      }
      (status === 200 ? accepted : refused).push(id);
    };
    // Four senders post one after another (as the service's deliveries would) while the instance
    // shuts down: each webhook is either acknowledged and kept, or refused and retried later.
    const senders = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 40; i++) await postOne(a, `during-${w}-${i}`);
    });
    await waitFor(() => accepted.length >= 20, 'some webhooks accepted', { timeoutMs: 10_000 });
    const port = a.relay.port;
    await stopInstance(a);
    await Promise.all(senders);
    expect(accepted.length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeGreaterThan(0); // the shutdown really happened mid-stream
    const postMany = (pair: { relay: RelayServer }, prefix: string, n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => postOne(pair, `${prefix}-${i}`)));
    await postMany(open[0]!, 'other', 20); // the other instance keeps accepting
    // Redis itself restarts from its append-only file.
    for (const p of [...open]) await stopInstance(p);
    const dir = redis.dir;
    const redisPort = redis.port;
    await redis.stop({ keepData: true });
    redis = await startRedis({ dir, port: redisPort });
    a = await instance(port);
    await postMany(a, 'after', 10);
    expect(accepted.length).toBeGreaterThan(10);
    const resumed = await TestClient.connect(
      a.relay.clientUrl('acme'),
      'tok',
      { extensions: ['555'] },
      startCursor,
    );
    clients.push(resumed);
    await resumed.until(() => resumed.events.length >= accepted.length, 10_000);
    await sleepReal(200);
    expect(new Set(resumed.eventIds())).toEqual(new Set(accepted));
    expect(resumed.eventIds()).toHaveLength(accepted.length);
  });

  it('while Redis is down: 503 (the service retries), readiness fails; afterwards delivery resumes', async () => {
    const pair = open[0]!;
    const client = await TestClient.connect(pair.relay.clientUrl('acme'), 'tok', {
      extensions: ['888'],
    });
    clients.push(client);
    const dir = redis.dir;
    const redisPort = redis.port;
    await redis.stop({ keepData: true });
    const body = envelope({ event_id: 'while-down', to: '888' });
    expect((await postWebhook(pair.relay.webhookUrl('acme'), body, signed(body))).status).toBe(503);
    expect((await fetch(pair.relay.url + '/readyz')).status).toBe(503);
    redis = await startRedis({ dir, port: redisPort });
    // The service's retry, once Redis is back (the client library reconnects by itself).
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await sleepReal(100);
      status = (await postWebhook(pair.relay.webhookUrl('acme'), body, signed(body))).status;
    }
    expect(status).toBe(200);
    await client.until(() => client.events.length === 1, 10_000);
    expect(client.eventIds()).toEqual(['while-down']);
    expect((await fetch(pair.relay.url + '/readyz')).status).toBe(200);
  });

  it('reports a gap when the stream was trimmed past the cursor', async () => {
    const c = config();
    c.retention.maxEvents = 10;
    const store = await openRedisStore(redis.url, ['acme'], { ...c.retention, maxEvents: 10 });
    try {
      const first = await store.append({
        tenant: 'acme',
        eventId: 'trim-0',
        event: 30011,
        to: '777',
        body: '{}',
        receivedAt: Date.now(),
      });
      expect(first.status).toBe('stored');
      for (let i = 1; i <= 400; i++)
        await store.append({
          tenant: 'acme',
          eventId: `trim-${i}`,
          event: 30011,
          to: '777',
          body: '{}',
          receivedAt: Date.now(),
        });
      const cursor = (first as { cursor: string }).cursor;
      const page = await store.readAfter('acme', cursor, 1000);
      expect(page.gap).not.toBeNull();
      expect(page.events.length).toBeLessThan(400);
      const latest = await store.latest('acme');
      expect((await store.readAfter('acme', latest!, 10)).gap).toBeNull();
    } finally {
      await store.close();
    }
  });
});
