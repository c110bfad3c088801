/**
 * One Yeastar call memory per tenant (issue 40 item 3): a call's reports reaching different relay
 * instances on one Redis decide as one process would. Two relays in this process on a real
 * redis-server (started here), real HTTP webhooks signed as the PBX signs them ("Monitor Events
 * via Webhook"), reports one member each as a real PBX sends them (doc section 5; the captured
 * frames of test/fixtures/yeastar-p-series and members built from the (30011) page's table).
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedStore } from '../../src-relay/gateway/leased-upstream.ts';
import { RedisCallMemory } from '../../src-relay/store/call-memory-redis.ts';
import type { RedisStore } from '../../src-relay/store/redis-store.ts';
import { FencedError, type EventStore } from '../../src-relay/store/types.ts';
import type { RelayServer } from '../../src-relay/server.ts';
import { startRelay } from '../../src-relay/server.ts';
import { CALL_MEMORY_ATTEMPTS, YeastarIntake } from '../../src-relay/yeastar-intake.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { sleepReal } from '../../rigs/wait.ts';
import { CUSTOMER, ringGroupCall } from '../../rigs/yeastar-ring-group.ts';
import {
  openRedisStore,
  redisAvailable,
  relayConfig,
  startMemoryRelay,
  startRedis,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';

const haveRedis = redisAvailable('test/relay/yeastar-calls-redis.test.ts');

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8').trim();
const CAPTURED = (
  JSON.parse(fixture('captured-sequences.json')) as { order_of_arrival: Record<string, string[]> }
).order_of_arrival;

/** A webhook Secret as the PBX generates it: 32 characters. */
const SECRET = 'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM';
const SEQUENCE = [
  ...ringGroupCall('1700000002.20'),
  ...CAPTURED['A-inbound-caller-hangs-up-while-ringing-1702364386.124']!.map(fixture),
  ...CAPTURED['B-inbound-caller-hangs-up-while-ringing-1702364968.127']!.map(fixture),
];

const xSignature = (body: string) => createHmac('sha256', SECRET).update(body).digest('base64');

async function deliver(relay: RelayServer, tenant: string, body: string) {
  const res = await fetch(relay.webhookUrl(tenant), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Signature': xSignature(body) },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

interface Env {
  event: number;
  event_id: string;
  data: Record<string, unknown>;
}

/** A tenant's stored events as the envelopes desktops get, without the time of receipt. */
async function envelopes(store: EventStore, tenant: string): Promise<Env[]> {
  const { events } = await store.readAfter(tenant, '0-0', 10_000);
  return events.map((e) => {
    const { event, event_id, data } = JSON.parse(String(e.body)) as Env;
    return { event, event_id, data };
  });
}

/** What extension `to` was told of call `callId`, in order. */
const statesOf = (list: Env[], callId: string, to: string) =>
  list
    .filter((e) => e.event === 30011 && e.data.call_id === callId && e.data.to === to)
    .map((e) => e.data.state);

const config = () =>
  relayConfig({
    solo: { baseUrl: 'http://127.0.0.1:9', secrets: [SECRET], phoneSystem: 'yeastar-p-series' },
    pair: { baseUrl: 'http://127.0.0.1:10', secrets: [SECRET], phoneSystem: 'yeastar-p-series' },
  });

async function startOn(url: string) {
  const store = await openRedisStore(url, ['solo', 'pair']);
  const relay = await startRelay({
    config: config(),
    store,
    clock: systemClock,
    logger: silentLogger,
  });
  return { relay, store };
}

describe.skipIf(!haveRedis)('relay: one Yeastar call memory in Redis', { timeout: 30_000 }, () => {
  let redis: RedisProcess;
  let a: { relay: RelayServer; store: RedisStore };
  let b: { relay: RelayServer; store: RedisStore };
  let one: Env[];

  beforeAll(async () => {
    redis = await startRedis();
    a = await startOn(redis.url);
    b = await startOn(redis.url);
    // The reference: every report through one instance.
    for (const body of SEQUENCE) expect((await deliver(a.relay, 'solo', body)).status).toBe(200);
    one = await envelopes(a.store, 'solo');
  });
  afterAll(async () => {
    await a?.relay.close();
    await b?.relay.close();
    await redis?.stop();
  });

  it('one instance on Redis decides as the one process of the memory store does', async () => {
    const memory = await startMemoryRelay(config());
    try {
      for (const body of SEQUENCE)
        expect((await deliver(memory.relay, 'solo', body)).status).toBe(200);
      expect(one).toEqual(await envelopes(memory.store, 'solo'));
    } finally {
      await memory.relay.close();
    }
    // What one process says of the ring group: each ring pops once with the caller, the answer
    // ends the other two rings once, nothing rings on after the call.
    const call = '1700000002.20';
    expect(statesOf(one, call, '101')).toEqual(['ringing', 'ended', 'ended']);
    expect(statesOf(one, call, '103')).toEqual(['ringing', 'ended', 'ended']);
    expect(statesOf(one, call, '102')).toEqual(['ringing', 'answered', 'ended']);
    const rings = one.filter((e) => e.data.call_id === call && e.data.state === 'ringing');
    expect(rings.map((e) => [e.data.from, e.data.caller_unseen])).toEqual([
      [CUSTOMER, undefined],
      [CUSTOMER, undefined],
      [CUSTOMER, undefined],
    ]);
  });

  it('reports sent alternately to instance A and instance B give the same envelopes as one instance', async () => {
    for (const [i, body] of SEQUENCE.entries()) {
      const to = i % 2 === 0 ? a.relay : b.relay;
      expect((await deliver(to, 'pair', body)).status).toBe(200);
    }
    expect(await envelopes(b.store, 'pair')).toEqual(one);
  });

  it('a retry of a report reaching the other instance decodes as the first delivery did', async () => {
    const call = '1700000009.90';
    const bodies = ringGroupCall(call);
    // Each report is delivered to A, then delivered again to B (the PBX's retry after a lost
    // answer): the second is the same event, stored once.
    const before = (await envelopes(a.store, 'pair')).length;
    for (const body of bodies) {
      expect((await deliver(a.relay, 'pair', body)).status).toBe(200);
      expect((await deliver(b.relay, 'pair', body)).json).toMatchObject({ ok: true });
    }
    const got = (await envelopes(a.store, 'pair')).slice(before);
    const ref = one.filter((e) => e.data.call_id === '1700000002.20');
    expect(got.map((e) => [e.data.to, e.data.state])).toEqual(
      ref.map((e) => [e.data.to, e.data.state]),
    );
  });

  it('a lease holder that lost its lease mid-call is fenced out of the call memory; the next holder decides as one process', async () => {
    const tenant = 'pair';
    const call = '1700000003.30';
    const bodies = ringGroupCall(call);
    const half = 4; // the caller and three rings: 102's answer and the rest after the takeover
    // Instance A holds the tenant's upstream lease and decodes what its stream brings.
    const tokenA = await a.store.acquireLease(tenant, 'relay-a', 300);
    expect(tokenA).not.toBeNull();
    let holdingA: string | undefined = tokenA!;
    const storeA = fencedStore(a.store, () => holdingA);
    const intakeA = new YeastarIntake(() => performance.now(), storeA.callMemory);
    const before = (await envelopes(a.store, tenant)).length;
    // What the lease holder's upstream does with a frame (gateway/upstream.ts store()).
    const storeVia = async (intake: YeastarIntake, store: EventStore, body: string) => {
      try {
        const decoded = await intake.receive(tenant, Buffer.from(body), Date.now());
        if (!decoded.ok) return decoded.reason;
        for (const e of decoded.events)
          await store.append({ tenant, ...e, receivedAt: Date.now() });
      } catch (err) {
        if (err instanceof FencedError) return 'fenced';
        throw err;
      }
      return 'stored';
    };
    for (const body of bodies.slice(0, half))
      expect(await storeVia(intakeA, storeA, body)).toBe('stored');

    // A freezes past its lease (SIGSTOP, a partition); B takes the lease over.
    await sleepReal(400);
    const tokenB = await b.store.acquireLease(tenant, 'relay-b', 5_000);
    expect(tokenB).not.toBeNull();
    const storeB = fencedStore(b.store, () => tokenB!);
    const intakeB = new YeastarIntake(() => performance.now(), storeB.callMemory);

    // A comes back still believing it holds the lease, with a report its stream had buffered
    // (102's hang-up, early): refused where it lands, the call's memory untouched.
    expect(await storeVia(intakeA, storeA, bodies[8]!)).toBe('fenced');
    // Its own clock then tells it the term ended: refused before Redis.
    holdingA = undefined;
    expect(await storeVia(intakeA, storeA, bodies[8]!)).toBe('fenced');

    // B's stream carries the call from where the PBX is: the same reports after the answer.
    for (const body of bodies.slice(half))
      expect(await storeVia(intakeB, storeB, body)).toBe('stored');
    const got = (await envelopes(a.store, tenant)).slice(before);
    const ref = one.filter((e) => e.data.call_id === '1700000002.20');
    expect(got.map((e) => [e.data.to, e.data.state, e.data.from])).toEqual(
      ref.map((e) => [e.data.to, e.data.state, e.data.from]),
    );
    await b.store.releaseLease(tenant, tokenB!);
  });

  it('reports of one call racing on both instances are applied one after the other (compare-and-set)', async () => {
    // The memory alone, as the intake uses it: read, add one to a count kept as the call's memory,
    // write back unless another won (then again). CALL_MEMORY_ATTEMPTS concurrent updates from two
    // instances' connections (each lost attempt is another update kept) leave that many.
    const clients = [new Redis(redis.url), new Redis(redis.url)];
    try {
      const memories = clients.map(
        (c) => new RedisCallMemory(c, 'race:', { leaseKey: (t) => `race:{${t}}:upstream-lease` }),
      );
      const bump = async (m: RedisCallMemory) => {
        for (let attempt = 0; attempt < CALL_MEMORY_ATTEMPTS; attempt++) {
          const { version, memory } = await m.read('acme', 'c1');
          const n = Number(memory ?? '0') + 1;
          if (await m.write('acme', 'c1', version, String(n), 60_000)) return n;
        }
        throw new Error('lost every attempt');
      };
      const seen = await Promise.all(
        Array.from({ length: CALL_MEMORY_ATTEMPTS }, (_, i) => bump(memories[i % 2]!)),
      );
      expect([...seen].sort((x, y) => x - y)).toEqual(
        Array.from({ length: CALL_MEMORY_ATTEMPTS }, (_, i) => i + 1),
      );
      expect((await memories[0]!.read('acme', 'c1')).memory).toBe(String(CALL_MEMORY_ATTEMPTS));
      expect(memories[0]!.counts.lost + memories[1]!.counts.lost).toBeGreaterThan(0);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });

  it('is bounded: calls expire, a tenant keeps at most maxCalls and maxBytes, its keys expire', async () => {
    const client = new Redis(redis.url);
    try {
      const m = new RedisCallMemory(client, 'bound:', {
        leaseKey: (t) => `bound:{${t}}:upstream-lease`,
        maxCalls: 5,
        maxBytes: 2_000,
      });
      const keep = async (id: string, text: string, ttlMs: number) =>
        expect(await m.write('acme', id, (await m.read('acme', id)).version, text, ttlMs)).toBe(
          true,
        );
      const read = async (id: string) => (await m.read('acme', id)).memory;
      await keep('short', 'x', 100);
      for (let i = 0; i < 8; i++) await keep(`c${i}`, `call ${i}`, 60_000);
      expect(await client.hlen('bound:{acme}:calls')).toBe(5);
      // The one that would expire soonest went first, then the oldest.
      expect(await read('short')).toBeNull();
      expect(await read('c0')).toBeNull();
      expect(await read('c7')).toBe('call 7');
      // A byte budget: a call of 1,900 bytes pushes older ones out, never itself.
      await keep('big', 'y'.repeat(1_900), 60_000);
      expect(await read('big')).toBe('y'.repeat(1_900));
      expect(Number(await client.get('bound:{acme}:calls:bytes'))).toBeLessThanOrEqual(2_000);
      expect(await client.hlen('bound:{acme}:calls')).toBeLessThan(5);
      // Past its time a call is gone, and the next write removes it.
      await keep('brief', 'z', 50);
      const fields = await client.hlen('bound:{acme}:calls');
      await sleepReal(80);
      expect(await read('brief')).toBeNull();
      await keep('later', 'w', 60_000);
      expect(await client.hlen('bound:{acme}:calls')).toBeLessThanOrEqual(fields);
      for (const key of [
        'bound:{acme}:calls',
        'bound:{acme}:calls:expiry',
        'bound:{acme}:calls:bytes',
      ])
        expect(await client.pttl(key)).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  });
});

describe.skipIf(!haveRedis)('relay: the call memory when Redis fails', { timeout: 30_000 }, () => {
  it('a report is answered 503 (retry) while Redis is away, never a throw; the retry decides as one process', async () => {
    const redis = await startRedis();
    const started = await startOn(redis.url);
    try {
      const bodies = ringGroupCall('1700000004.40');
      expect((await deliver(started.relay, 'pair', bodies[0]!)).status).toBe(200);
      // The call memory's Redis hangs (paused): the report is not decided without it.
      process.kill(redis.pid, 'SIGSTOP');
      const res = await deliver(started.relay, 'pair', bodies[1]!);
      process.kill(redis.pid, 'SIGCONT');
      expect(res).toEqual({ status: 503, json: { ok: false, error: 'not stored; retry' } });
      expect(started.relay.metrics.rejected.get('storage-error')).toBe(1);
      // The PBX retries; the ring carries the caller of the first report.
      await sleepReal(200);
      let retry = await deliver(started.relay, 'pair', bodies[1]!);
      for (let i = 0; i < 20 && retry.status !== 200; i++) {
        await sleepReal(250);
        retry = await deliver(started.relay, 'pair', bodies[1]!);
      }
      expect(retry.status).toBe(200);
      const list = await envelopes(started.store, 'pair');
      expect(list.map((e) => [e.data.to, e.data.state, e.data.from])).toEqual([
        ['101', 'ringing', CUSTOMER],
      ]);
    } finally {
      await started.relay.close();
      await redis.stop();
    }
  });
});
