/**
 * Issue 40: the lease holder of many tenants waits for handed call requests with a blocking read
 * (gateway/call-handoff.ts, redis-store.ts `watchCallRequests`), not by asking Redis 10 times a
 * second per tenant. Counted, not timed: the commands a real redis-server saw (INFO commandstats)
 * while a holder of TENANTS tenants sat idle for IDLE_MS, then a request handed to one of them is
 * still served, once.
 *
 * Before (main at 8dcd7d5): "idle holder, 20 tenants, 3000 ms: 1750 commands {"get":580,
 * "xread":10,"lpop":580,"eval":580}" (the fenced take, about 10 a second per tenant, with the GET
 * and LPOP inside its script), "expected 1750 to be less than or equal to 40". After: 18, the
 * XREAD BLOCKs of the two followers and the holder's wait. The second case (a term that begins
 * after the push) failed with the term's start not checked: "not-picked-up".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { CallHandoff } from '../../src-relay/gateway/call-handoff.ts';
import type { PbxCallAnswer, RelayCallApi } from '../../src-relay/calls/call-route.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import { redisAvailable, startRedis } from '../../rigs/relay/helpers.ts';

const TENANTS = 20;
const IDLE_MS = 3_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** Every command the server executed so far, by name (INFO commandstats). */
async function commandCounts(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info('commandstats');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

/** The phone system's side of the holder: answers every dial at once, counting them. */
function pbx(): RelayCallApi & { dials: string[] } {
  const dials: string[] = [];
  const ok = async (): Promise<PbxCallAnswer> => ({ ok: true });
  return {
    dials,
    dial: async (from, to) => {
      dials.push(`${from}->${to}`);
      return { ok: true, callId: `c${dials.length}` };
    },
    transfer: ok,
    hangup: ok,
    attended: ok,
  };
}

async function openStore(url: string, tenants: string[]): Promise<RedisStore> {
  const store = new RedisStore({
    url,
    tenants,
    clock: systemClock,
    logger: silentLogger,
    blockMs: 500,
  });
  await store.open();
  cleanups.push(() => store.close());
  return store;
}

describe.skipIf(!redisAvailable(__filename))(
  'the call handoff holder waits on Redis without polling',
  { timeout: 30_000 },
  () => {
    it(`an idle holder of ${TENANTS} tenants issues a bounded number of commands; a handed dial is still served once`, async () => {
      const redis = await startRedis();
      cleanups.push(() => redis.stop());
      const tenants = Array.from({ length: TENANTS }, (_, i) => `t${i}`);
      const holderStore = await openStore(redis.url, tenants);
      const standbyStore = await openStore(redis.url, tenants);
      const far = pbx();
      const handoffs: CallHandoff[] = [];
      for (const tenant of tenants) {
        const term = (await holderStore.acquireLease(tenant, 'holder', 60_000))!;
        expect(term).toBeTruthy();
        const h = new CallHandoff({
          tenant,
          backend: holderStore,
          local: far,
          term: () => term,
          extensionsOf: async () => ['101'],
          clock: systemClock,
          logger: silentLogger,
        });
        h.start();
        handoffs.push(h);
      }
      cleanups.push(async () => handoffs.forEach((h) => h.stop()));
      const admin = new Redis(redis.url);
      cleanups.push(async () => void admin.disconnect());

      // Settle (connections made, first reads sent), then count over the idle window.
      await new Promise((r) => setTimeout(r, 500));
      const before = await commandCounts(admin);
      await new Promise((r) => setTimeout(r, IDLE_MS));
      const after = await commandCounts(admin);
      const delta: Record<string, number> = {};
      let total = 0;
      for (const [name, calls] of after) {
        const d = calls - (before.get(name) ?? 0);
        if (d === 0 || name === 'info') continue;
        delta[name] = d;
        total += d;
      }
      console.log(
        `idle holder, ${TENANTS} tenants, ${IDLE_MS} ms: ${total} commands ${JSON.stringify(delta)}`,
      );
      // The followers' XREAD BLOCK (500 ms) and the handoff's blocking read: a handful each.
      expect(total).toBeLessThanOrEqual(40);

      // A standby hands a dial for the last tenant over: served by the holder, once.
      const standby = new CallHandoff({
        tenant: tenants[TENANTS - 1]!,
        backend: standbyStore,
        local: pbx(),
        term: () => undefined,
        extensionsOf: async () => null,
        clock: systemClock,
        logger: silentLogger,
      });
      const answer = await standby.api().dial('101', '+14155550199', 'alice');
      expect(answer).toEqual({ ok: true, callId: 'c1' });
      expect(far.dials).toEqual(['101->+14155550199']);
    });

    it('a request pushed while no term ran here is taken when this instance becomes the holder', async () => {
      const redis = await startRedis();
      cleanups.push(() => redis.stop());
      const store = await openStore(redis.url, ['acme']);
      const far = pbx();
      let term: string | undefined = undefined;
      const holder = new CallHandoff({
        tenant: 'acme',
        backend: store,
        local: far,
        term: () => term,
        extensionsOf: async () => ['101'],
        clock: systemClock,
        logger: silentLogger,
      });
      holder.start();
      cleanups.push(async () => holder.stop());
      const standby = new CallHandoff({
        tenant: 'acme',
        backend: store,
        local: pbx(),
        term: () => undefined,
        extensionsOf: async () => null,
        clock: systemClock,
        logger: silentLogger,
      });
      // The bell rings while nobody holds the lease: nothing taken; the term begins 1 s later.
      const pending = standby.api().dial('101', '+14155550199', 'alice');
      await new Promise((r) => setTimeout(r, 1_000));
      expect(far.dials).toEqual([]);
      term = (await store.acquireLease('acme', 'holder', 60_000))!;
      expect(await pending).toEqual({ ok: true, callId: 'c1' });
      expect(far.dials).toEqual(['101->+14155550199']);
    });
  },
);
