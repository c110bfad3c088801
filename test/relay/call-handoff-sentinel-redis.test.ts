/**
 * Issue 40: the call handoff's blocking wait (redis-store.ts watchCallRequests / watchCallAnswers,
 * a connection of its own) follows a Sentinel failover as the store's other connections do. Real
 * processes: a primary, a replica, three sentinels; a holder and a standby store in this process
 * with storage.sentinel. A dial handed over before the primary is killed is served; one pushed
 * after the sentinels promoted the replica is served too (the holder polls nothing: only its
 * wait, on the new primary, can have woken it), each once.
 *
 * Not a regression test of the old code (its holder polled every 100 ms through the commands'
 * connection, which follows failovers): it guards the new connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { CallHandoff } from '../../src-relay/gateway/call-handoff.ts';
import type { PbxCallAnswer, RelayCallApi } from '../../src-relay/calls/call-route.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import type { RedisStorage } from '../../src-relay/store/redis-connection.ts';
import { redisAvailable } from '../../rigs/relay/helpers.ts';
import { sentinelAvailable, startSentinelGroup } from '../../rigs/relay/sentinel-support.ts';

const file = 'test/relay/call-handoff-sentinel-redis.test.ts';
const haveAll = redisAvailable(file) && sentinelAvailable(file);
const TENANT = 'acme';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

describe.skipIf(!haveAll)('the call handoff across a Sentinel failover', () => {
  it(
    'a dial pushed after the primary was killed and the replica promoted is served by the holder, once',
    {
      timeout: 60_000,
    },
    async () => {
      const group = await startSentinelGroup();
      cleanups.push(() => group.stop());
      const storage: RedisStorage = {
        kind: 'redis',
        keyPrefix: 'ho:',
        sentinel: { name: group.name, nodes: group.sentinels },
        minReplicas: 0,
        replicaTimeoutMs: 500,
        commandTimeoutMs: 1_000,
        upstreamLeaseMs: 10_000,
      };
      const open = async () => {
        const store = new RedisStore({
          storage,
          keyPrefix: 'ho:',
          tenants: [TENANT],
          clock: systemClock,
          logger: silentLogger,
          blockMs: 500,
          commandTimeoutMs: 1_000,
        });
        await store.open();
        cleanups.push(() => store.close());
        return store;
      };
      const holderStore = await open();
      const standbyStore = await open();
      const term = (await holderStore.acquireLease(TENANT, 'holder', 120_000))!;
      expect(term).toBeTruthy();
      // The lease on the replica before the kill (what the failover keeps).
      const [host, port] = (await group.currentPrimary()).split(':');
      const primary = new Redis({ host, port: Number(port) });
      await primary.call('WAIT', '1', '2000');
      primary.disconnect();

      const dials: string[] = [];
      const ok = async (): Promise<PbxCallAnswer> => ({ ok: true });
      const far: RelayCallApi = {
        dial: async (from, to) => {
          dials.push(to);
          return { ok: true, callId: `c${dials.length}` };
        },
        transfer: ok,
        hangup: ok,
        attended: ok,
      };
      const handoff = (store: RedisStore, t: () => string | undefined, local: RelayCallApi) =>
        new CallHandoff({
          tenant: TENANT,
          backend: store,
          local,
          term: t,
          extensionsOf: async () => ['101'],
          clock: systemClock,
          logger: silentLogger,
        });
      const holder = handoff(holderStore, () => term, far);
      holder.start();
      cleanups.push(async () => holder.stop());
      const standby = handoff(standbyStore, () => undefined, far);
      standby.start();
      cleanups.push(async () => standby.stop());

      expect(await standby.api().dial('101', '+14155550101', 'alice')).toEqual({
        ok: true,
        callId: 'c1',
      });

      const killed = await group.killCurrentPrimary();
      const startedAt = Date.now();
      while ((await group.currentPrimary()) === killed) {
        if (Date.now() - startedAt > 30_000) throw new Error('no failover within 30 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      const promoted = await group.currentPrimary();
      // The standby's commands on the promoted primary (its push would fail before: not this test).
      while (
        standbyStore.storageHealth().primary !== promoted ||
        !standbyStore.storageHealth().connected
      ) {
        if (Date.now() - startedAt > 30_000) throw new Error('the standby did not follow');
        await new Promise((r) => setTimeout(r, 100));
      }
      const after = await standby.api().dial('101', '+14155550102', 'alice');
      console.log(
        `failover ${killed} -> ${promoted}: dial pushed ${Date.now() - startedAt} ms after the kill: ${JSON.stringify(after)}`,
      );
      expect(after).toEqual({ ok: true, callId: 'c2' });
      expect(dials).toEqual(['+14155550101', '+14155550102']);
    },
  );
});
