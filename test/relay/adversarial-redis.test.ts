/**
 * The adversarial probe (attacks.ts), the items that need the Redis backend: the real relay process
 * against a redis-server this file starts (and pauses, and stops) on 127.0.0.1. See
 * adversarial.test.ts for the memory-backed items and how ceilings are measured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFloodCut, FLOOD_TEST_MS } from './adversarial-support.ts';
import { fillBacklog, postRaw, replayHoard, timed } from '../../rigs/relay/attacks.ts';
import {
  SECRET,
  envelope,
  redisAvailable,
  signed,
  startRedis,
  startTokenService,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';
import { spawnRelay, type RelayProcess } from '../../rigs/relay/relay-process.ts';

const haveRedis = redisAvailable('test/relay/adversarial-redis.test.ts');

const TOKENS = { has: (t: string) => t.startsWith('tok') };

describe.skipIf(!haveRedis)('adversarial, Redis backend', () => {
  let service: Awaited<ReturnType<typeof startTokenService>>;
  beforeAll(async () => {
    service = await startTokenService(TOKENS);
  });
  afterAll(async () => {
    await service?.close();
  });
  const start = (redis: RedisProcess, extra: Record<string, unknown> = {}) =>
    spawnRelay({
      config: {
        tenants: { acme: { baseUrl: service.baseUrl, secrets: [SECRET] } },
        storage: { kind: 'redis', url: redis.url },
        ...extra,
      },
    });

  describe('with a running Redis', () => {
    let redis: RedisProcess;
    let relay: RelayProcess;
    beforeAll(async () => {
      redis = await startRedis();
      relay = await start(redis, { logLevel: 'warn' });
    });
    afterAll(async () => {
      await relay?.stop();
      await redis?.stop();
    });

    it(
      'item 1: a heartbeat flood without reading is closed, RSS within 64 MiB',
      async () => {
        await expectFloodCut(relay, 'tok');
      },
      FLOOD_TEST_MS,
    );

    it('item 4: 60 clients resuming a 12 MB backlog without reading: RSS within 100 MiB', async () => {
      // They share each page read from Redis (replay-pages.ts) instead of each pulling a copy.
      expect(await fillBacklog(relay.url, 1500, 8192)).toBe(1500);
      const r = await replayHoard({
        relayUrl: relay.url,
        pid: relay.pid,
        clients: 60,
        token: (i) => `tok-${i}`,
        holdSeconds: 3,
      });
      expect(r.admitted).toBe(60);
      expect(r.peakMiB - r.startMiB).toBeLessThan(100);
    });
  });

  it('item 5: a hung Redis (SIGSTOP) gives 503 to webhooks and /readyz within seconds, and recovers', async () => {
    const redis = await startRedis();
    const relay = await start(redis, { logLevel: 'error' });
    try {
      process.kill(redis.pid, 'SIGSTOP');
      const body = envelope({ event_id: 'while-hung' });
      const [webhook, ready] = await Promise.all([
        timed((signal) => fetchStatus(relay.url + '/webhook/acme', signal, body), 20_000),
        timed((signal) => fetchStatus(relay.url + '/readyz', signal), 20_000),
      ]);
      // storage.commandTimeoutMs is 2 s.
      expect(webhook.status).toBe(503);
      expect(webhook.ms).toBeLessThan(6_000);
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(6_000);
      process.kill(redis.pid, 'SIGCONT');
      // The service's retry is accepted once Redis answers again (stored once, whatever the
      // answer to the first attempt was).
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = await postRaw(relay.url + '/webhook/acme', body, signed(body));
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(200);
    } finally {
      process.kill(redis.pid, 'SIGCONT');
      await relay.stop();
      await redis.stop();
    }
  });

  it('item 7: with its Redis shut down, SIGTERM still drains and exits 0 within seconds', async () => {
    const redis = await startRedis();
    const relay = await start(redis);
    await redis.stop();
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    const end = await relay.stop(20_000);
    expect(end).toEqual({ code: 0, signal: null });
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(relay.logLines().map((l) => l.msg)).toEqual(
      expect.arrayContaining(['shutdown requested', 'relay draining', 'relay stopped']),
    );
  });
});

async function fetchStatus(url: string, signal: AbortSignal, body?: string): Promise<number> {
  const res = await fetch(url, {
    signal,
    ...(body ? { method: 'POST', body, headers: { 'X-Service-Signature': signed(body) } } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}
