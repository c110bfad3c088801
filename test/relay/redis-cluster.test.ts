import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { openStore } from '../../src-relay/store/open-store.ts';
import type { EventStore } from '../../src-relay/store/types.ts';
import {
  SECRET,
  TestClient,
  envelope,
  postWebhook,
  redisAvailable,
  relayConfig,
  signed,
  startRedis,
  startTokenService,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';
import { waitFor } from '../../rigs/wait.ts';

// A Redis Cluster of three primaries (real redis-server processes, cluster mode, slots given out
// by redis-cli --cluster create), two tenants whose streams live on different nodes, and two
// relay instances on storage.cluster: a tenant's keys share a slot (the {tenant} hash tag), so
// the append script runs, and each tenant is followed on a connection of its own.
const file = 'test/relay/redis-cluster.test.ts';
const haveRedis = redisAvailable(file);

describe.skipIf(!haveRedis)('Redis Cluster', () => {
  const nodes: RedisProcess[] = [];
  const services: Awaited<ReturnType<typeof startTokenService>>[] = [];
  const instances: { relay: RelayServer; store: EventStore }[] = [];
  const clients: TestClient[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++)
      nodes.push(
        await startRedis({ args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'] }),
      );
    const created = spawnSync(
      '/usr/bin/redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create: ${created.stdout}`);
    await waitFor(
      () =>
        spawnSync('/usr/bin/redis-cli', ['-p', String(nodes[0]!.port), 'cluster', 'info'], {
          encoding: 'utf8',
        }).stdout.includes('cluster_state:ok'),
      'the cluster to be ok',
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    for (let i = 0; i < 2; i++) services.push(await startTokenService(new Set([`tok-${i}`])));
  }, 40_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const i of instances) {
      await i.relay.close();
      await i.store.close();
    }
    for (const s of services) await s.close();
    for (const n of nodes) await n.stop();
  }, 30_000);

  it('two tenants on different nodes: each webhook reaches its tenant on the other instance, once', async () => {
    // The two tenants' hash tags fall in different slots (and, three nodes sharing the slots in
    // thirds, here on different nodes): asked of the cluster, not assumed.
    const slotOf = (key: string) =>
      Number(
        spawnSync('/usr/bin/redis-cli', ['-p', String(nodes[0]!.port), 'cluster', 'keyslot', key], {
          encoding: 'utf8',
        }).stdout.trim(),
      );
    const tenants = ['acme', 'zeta'];
    const third = (slot: number) => Math.floor((slot * 3) / 16384);
    expect(third(slotOf('{acme}'))).not.toBe(third(slotOf('{zeta}')));
    const config = relayConfig(
      {
        acme: { baseUrl: services[0]!.baseUrl, secrets: [SECRET] },
        zeta: { baseUrl: services[1]!.baseUrl, secrets: ['zeta-secret-1'] },
      },
      {
        storage: {
          kind: 'redis',
          cluster: { nodes: [`127.0.0.1:${nodes[0]!.port}`] },
        },
      },
    );
    for (let i = 0; i < 2; i++) {
      const store = await openStore(config, systemClock, silentLogger);
      const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
      instances.push({ relay, store });
    }
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const onB = await Promise.all(
      tenants.map((t, i) =>
        TestClient.connect(b.relay.clientUrl(t), `tok-${i}`, { extensions: ['101'] }),
      ),
    );
    clients.push(...onB);
    const secretOf = (t: string) => (t === 'acme' ? SECRET : 'zeta-secret-1');
    for (let n = 0; n < 5; n++)
      for (const t of tenants) {
        const body = envelope({ event_id: `${t}-${n}`, tenant: t });
        expect(
          (await postWebhook(a.relay.webhookUrl(t), body, signed(body, secretOf(t)))).status,
        ).toBe(200);
        // The service's retry at the other instance: a duplicate there too.
        expect(
          (await postWebhook(b.relay.webhookUrl(t), body, signed(body, secretOf(t)))).status,
        ).toBe(200);
      }
    for (const [i, t] of tenants.entries()) {
      const c = onB[i]!;
      await c.until(() => c.events.length >= 5);
      expect(c.eventIds()).toEqual([0, 1, 2, 3, 4].map((n) => `${t}-${n}`));
    }
    expect(a.relay.metrics.stored + b.relay.metrics.stored).toBe(10);
  }, 30_000);
});
