/**
 * Issue 40: the call handoff on a Redis Cluster (rigs/relay/cluster-support.ts: three primaries,
 * no replicas). The holder's blocking wait is one connection per tenant there (a command's keys
 * share a slot): tenants on every primary, a dial handed over for each is served, once, and the
 * bells are in the tenant's slot (the push and answer scripts would fail with CROSSSLOT else).
 * An idle holder's commands over 2 s, summed over the nodes, are bounded.
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
import { startRedisCluster } from '../../rigs/relay/cluster-support.ts';

const CANDIDATES = ['acme', 'zeta', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma', 'theta'];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function calls(ports: number[]): Promise<number> {
  let total = 0;
  for (const port of ports) {
    const r = new Redis({ host: '127.0.0.1', port });
    const text = await r.info('commandstats');
    r.disconnect();
    for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
      if (!['info', 'cluster', 'command'].includes(m[1]!)) total += Number(m[2]);
  }
  return total;
}

describe.skipIf(!redisAvailable(__filename))('the call handoff on a Redis Cluster', () => {
  it(
    'tenants on every primary: each handed dial is served once; an idle holder asks little',
    {
      timeout: 60_000,
    },
    async () => {
      const cluster = await startRedisCluster({ primaries: 3, replicasEach: 0 });
      cleanups.push(() => cluster.stop());
      const perPrimary = new Map<number, string>();
      for (const t of CANDIDATES) {
        const port = await cluster.primaryOf(await cluster.keyslot(`{${t}}`));
        if (!perPrimary.has(port)) perPrimary.set(port, t);
      }
      const tenants = [...perPrimary.values()];
      expect(tenants).toHaveLength(3);
      const storage: RedisStorage = {
        kind: 'redis',
        keyPrefix: 'hc:',
        cluster: { nodes: [cluster.addresses[0]!] },
        minReplicas: 0,
        replicaTimeoutMs: 300,
        commandTimeoutMs: 1_000,
        upstreamLeaseMs: 10_000,
      };
      const open = async () => {
        const store = new RedisStore({
          storage,
          keyPrefix: 'hc:',
          tenants,
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
      const standbys = new Map<string, CallHandoff>();
      for (const tenant of tenants) {
        const term = (await holderStore.acquireLease(tenant, 'holder', 60_000))!;
        const deps = {
          tenant,
          extensionsOf: async () => ['101'],
          clock: systemClock,
          logger: silentLogger,
        };
        const holder = new CallHandoff({
          ...deps,
          backend: holderStore,
          local: far,
          term: () => term,
        });
        const standby = new CallHandoff({
          ...deps,
          backend: standbyStore,
          local: far,
          term: () => undefined,
        });
        holder.start();
        standby.start();
        standbys.set(tenant, standby);
        cleanups.push(async () => {
          holder.stop();
          standby.stop();
        });
      }
      await new Promise((r) => setTimeout(r, 500));
      const ports = cluster.nodes.map((n) => n.port);
      const before = await calls(ports);
      await new Promise((r) => setTimeout(r, 2_000));
      const idle = (await calls(ports)) - before;
      console.log(`idle holder and standby, ${tenants.length} tenants, 2 s: ${idle} commands`);
      // Each store: a follower and a wait per tenant, one XREAD BLOCK (500 ms) each at a time.
      expect(idle).toBeLessThanOrEqual(2 * 2 * tenants.length * 5);

      for (const [i, tenant] of tenants.entries()) {
        const answer = await standbys.get(tenant)!.api().dial('101', `+1415555010${i}`, 'alice');
        expect(answer, tenant).toEqual({ ok: true, callId: `c${i + 1}` });
      }
      expect(dials).toEqual(tenants.map((_, i) => `+1415555010${i}`));
    },
  );
});
