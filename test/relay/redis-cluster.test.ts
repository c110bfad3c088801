import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { openStore } from '../../src-relay/store/open-store.ts';
import type { RedisStore } from '../../src-relay/store/redis-store.ts';
import { FencedError, type EventStore } from '../../src-relay/store/types.ts';
import { RedisUserStore } from '../../src-relay/users/redis-user-store.ts';
import type { RelayConfig } from '../../src-relay/config.ts';
import {
  TestClient,
  envelope,
  postWebhook,
  redisAvailable,
  relayConfig,
  signed,
  startRedis,
  startTokenService,
} from '../../rigs/relay/helpers.ts';
import { startRedisCluster, type RedisClusterNodes } from '../../rigs/relay/cluster-support.ts';
import { runRelayWith } from '../../rigs/relay/relay-process.ts';
import { sleepReal } from '../../rigs/wait.ts';
import { useTempDir } from '../support/temp-dir.ts';

// A Redis Cluster of real redis-server processes (rigs/relay/cluster-support.ts): three primaries
// sharing the slots in thirds, each with a replica, cluster-node-timeout 1 s. Six tenants whose
// hash tags fall on every primary; two relay instances in this process on storage.cluster.
const file = 'test/relay/redis-cluster.test.ts';
const haveRedis = redisAvailable(file);
const CANDIDATES = ['acme', 'zeta', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma', 'theta'];
const tmp = useTempDir('relay-cluster-check-');

describe.skipIf(!haveRedis)('Redis Cluster', () => {
  let cluster: RedisClusterNodes;
  const services: Awaited<ReturnType<typeof startTokenService>>[] = [];
  let config: RelayConfig;
  /** Six tenants, two on each primary. */
  let tenants: string[] = [];
  const slotOf = new Map<string, number>();
  const instances: { relay: RelayServer; store: EventStore }[] = [];
  const clients: TestClient[] = [];
  const userStores: RedisUserStore[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasEach: 1 });
    // Two tenants per primary, asked of the cluster, not assumed.
    const perPrimary = new Map<number, string[]>();
    for (const t of CANDIDATES) {
      const slot = await cluster.keyslot(`{${t}}`);
      slotOf.set(t, slot);
      const port = await cluster.primaryOf(slot);
      const list = perPrimary.get(port) ?? [];
      if (list.length < 2) perPrimary.set(port, [...list, t]);
    }
    tenants = [...perPrimary.values()].flat();
    expect(perPrimary.size).toBe(3);
    expect(tenants).toHaveLength(6);
    // Each tenant its own service (the relay refuses two tenants on one base URL).
    for (const _ of tenants)
      services.push(await startTokenService({ has: (t: string) => t.startsWith('tok-') }));
    config = relayConfig(
      Object.fromEntries(
        tenants.map((t, i) => [t, { baseUrl: services[i]!.baseUrl, secrets: [`${t}-secret-1`] }]),
      ),
      {
        storage: {
          kind: 'redis',
          keyPrefix: 'rc:',
          cluster: { nodes: [cluster.addresses[0]!] },
          commandTimeoutMs: 1_000,
          minReplicas: 1,
          replicaTimeoutMs: 300,
        },
      },
    );
    for (let i = 0; i < 2; i++) {
      const store = await openStore(config, systemClock, silentLogger);
      const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
      instances.push({ relay, store });
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const u of userStores) await u.close();
    for (const i of instances) {
      await i.relay.close();
      await i.store.close();
    }
    for (const s of services) await s.close();
    await cluster?.stop();
  }, 30_000);

  const secretOf = (t: string) => `${t}-secret-1`;
  /** The service: a webhook retried after anything but 200 (as the service retries), alternating instances. */
  const deliver = async (tenant: string, id: string, deadline = Date.now() + 30_000) => {
    const body = envelope({ event_id: id, tenant });
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const at = instances[attempt % 2]!.relay;
      const { status } = await postWebhook(
        at.webhookUrl(tenant),
        body,
        signed(body, secretOf(tenant)),
      ).catch(() => ({ status: 0 }));
      if (status === 200) return attempt;
      await sleepReal(100);
    }
    // What the store says when asked directly, and what the nodes and the instances say.
    const direct = await instances[0]!.store
      .append({
        tenant,
        eventId: `${id}-probe`,
        event: 30011,
        to: '101',
        receivedAt: Date.now(),
        body,
      })
      .then(
        (r) => JSON.stringify(r),
        (e: Error) => e.message,
      );
    throw new Error(
      `${tenant} ${id} not acknowledged in time: ${JSON.stringify({ direct, nodes: await cluster.state(), health: instances.map((i) => i.store.storageHealth?.()) })}`,
    );
  };

  it('--check-config accepts a cluster named in the environment and says its state; a lone Redis named as a cluster is refused', async () => {
    const good = await runRelayWith(tmp.path, {}, ['--check-config'], {
      RELAY_REDIS_CLUSTER_NODES: cluster.addresses.slice(0, 2).join(','),
      RELAY_REDIS_MIN_REPLICAS: '1',
    });
    expect(good.err).toBe('');
    expect(good.code, good.out).toBe(0);
    expect(good.out).toContain(
      `storage: the Redis Cluster at ${cluster.addresses.slice(0, 2).join(', ')}, a webhook answered once 1 replica(s) have it`,
    );
    // A key prefix with braces would put every tenant in the prefix's slot.
    const braces = await runRelayWith(
      tmp.path,
      {
        storage: { kind: 'redis', keyPrefix: 'relay{a}:', cluster: { nodes: cluster.addresses } },
      },
      ['--check-config'],
    );
    expect(braces.code, braces.out).toBe(0);
    expect(braces.out).toMatch(/warning: storage.keyPrefix "relay\{a\}:" has a \{ or \}/);
    expect(braces.out).toMatch(/warning: storage.minReplicas is 0/);
    expect(good.out).toMatch(
      /storage opened and closed again: redis answers \(cluster_state:ok, 3 primaries, 3 replicas\)/,
    );
    const lone = await startRedis();
    try {
      const bad = await runRelayWith(tmp.path, {}, ['--check-config'], {
        RELAY_REDIS_CLUSTER_NODES: `127.0.0.1:${lone.port}`,
      });
      expect(bad.code, bad.out + bad.err).toBe(1);
      expect(bad.out).toMatch(/cannot connect to the Redis Cluster at 127\.0\.0\.1:\d+/);
    } finally {
      await lone.stop();
    }
  }, 40_000);

  it('tenants on every primary: each webhook reaches its desktops on the other instance once and in order, and a desktop resumes by cursor', async () => {
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const onB = await Promise.all(
      tenants.map((t, i) =>
        TestClient.connect(b.relay.clientUrl(t), `tok-${i}`, { extensions: ['101'] }),
      ),
    );
    clients.push(...onB);
    for (let n = 0; n < 5; n++)
      for (const t of tenants) {
        const body = envelope({ event_id: `${t}-${n}`, tenant: t });
        expect(
          (await postWebhook(a.relay.webhookUrl(t), body, signed(body, secretOf(t)))).status,
        ).toBe(200);
        // The service's retry at the other instance: a duplicate there.
        expect(
          (await postWebhook(b.relay.webhookUrl(t), body, signed(body, secretOf(t)))).status,
        ).toBe(200);
      }
    for (const [i, t] of tenants.entries()) {
      const c = onB[i]!;
      await c.until(() => c.events.length >= 5);
      expect(c.eventIds()).toEqual([0, 1, 2, 3, 4].map((n) => `${t}-${n}`));
    }
    // A desktop that left after the third event resumes from its cursor on the other instance.
    const first = tenants[0]!;
    const stored = (await (a.store as RedisStore).readAfter(first, '0-0', 10)).events;
    const resumed = await TestClient.connect(
      b.relay.clientUrl(first),
      'tok-resume',
      { extensions: ['101'] },
      stored[2]!.cursor,
    );
    clients.push(resumed);
    await resumed.until(() => resumed.events.length >= 2);
    await sleepReal(200);
    expect(resumed.eventIds()).toEqual([`${first}-3`, `${first}-4`]);
    expect(a.relay.metrics.stored + b.relay.metrics.stored).toBe(30);
    // What the two instances hold open (printed, not asserted): each follows each tenant on a
    // cluster connection of its own.
    const held = await cluster.clients();
    console.log(
      `cluster connections with ${tenants.length} tenants and 2 instances: ${JSON.stringify(held)} (each node's count includes the rig's own connection and its replica's link)`,
    );
  }, 30_000);

  it('every key the relay writes is in its tenant’s slot (or the users’ one): leases, term tokens, call memory, claims, users', async () => {
    const store = instances[0]!.store as RedisStore;
    for (const t of tenants) {
      const token = await store.acquireLease(t, 'instance-a', 10_000);
      expect(token).toBeTruthy();
      expect(await store.extendLease(t, token!, 10_000)).toBe(true);
      // The holder's append (fenced, its WAIT pipelined with it): stored with the term's token,
      // refused with another.
      const ev = (id: string) => ({
        tenant: t,
        eventId: id,
        event: 30011,
        to: '101',
        body: `{"event_id":"${id}"}`,
        receivedAt: Date.now(),
      });
      expect((await store.appendFenced(ev(`${t}-held`), token!)).status).toBe('stored');
      await expect(store.appendFenced(ev(`${t}-stale`), 'instance-z#99')).rejects.toBeInstanceOf(
        FencedError,
      );
      await store.recordTermToken(
        t,
        'h1',
        `${Date.now() + 60_000}:sealed`,
        Date.now() + 60_000,
        Date.now(),
      );
      expect(Object.keys(await store.listTermTokens(t))).toEqual(['h1']);
      const { version } = await store.callMemory.read(t, 'call-1');
      expect(await store.callMemory.write(t, 'call-1', version, 'memory', 60_000, token!)).toBe(
        true,
      );
      expect((await store.callMemory.read(t, 'call-1')).memory).toBe('memory');
      expect(await store.claimCall!(t, 'call-1', 'alice', 60_000)).toBe('alice');
      expect(await store.claimCall!(t, 'call-1', 'bob', 60_000)).toBe('alice');
    }
    const users = new RedisUserStore({ storage: config.storage as never, keyPrefix: 'rc:' });
    userStores.push(users);
    await users.open();
    // Another instance's users store, following the changes (the PUBLISH inside each script
    // reaches a subscriber on any node of the cluster).
    const follower = new RedisUserStore({ storage: config.storage as never, keyPrefix: 'rc:' });
    userStores.push(follower);
    await follower.open();
    await follower.follow();
    const heard: string[] = [];
    follower.onChange((c) => heard.push(`${c.tenant}/${c.user}`));
    const now = Date.now();
    for (const t of tenants) {
      await users.addUser(
        { tenant: t, name: 'alice', extensions: ['101'], dids: [], email: `alice@${t}.example` },
        now,
      );
      await users.issueCode(t, 'alice', `code-${t}`, 60_000, now);
      expect((await users.redeem(t, `code-${t}`, `cred-${t}`, 'desk', now)).ok).toBe(true);
      expect(await users.revoke(t, 'alice', now + 1)).toBe(true);
    }
    // Each tenant's add, redeem and revoke reached the other instance.
    await expect.poll(() => heard.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(18);
    expect(new Set(heard)).toEqual(new Set(tenants.map((t) => `${t}/alice`)));
    // `relay users list` across tenants: every tenant's users, whichever node SCAN is asked of.
    for (let i = 0; i < 6; i++)
      expect([...new Set((await users.list()).map((u) => u.user.tenant))].sort()).toEqual(
        [...tenants].sort(),
      );

    const keys = await cluster.keys();
    const usersSlot = await cluster.keyslot('{users}');
    const kinds = new Map<string, Set<string>>();
    for (const { key, slot } of keys) {
      const tag = /^rc:\{([^}]+)\}:(.*)$/.exec(key);
      expect(tag, key).not.toBeNull();
      const [, owner, rest] = tag!;
      expect(slot, key).toBe(owner === 'users' ? usersSlot : slotOf.get(owner!));
      if (owner !== 'users')
        kinds.set(
          owner!,
          new Set([...(kinds.get(owner!) ?? []), rest!.replace(/^(seen|claim):.*/, '$1:*')]),
        );
    }
    for (const t of tenants)
      expect([...(kinds.get(t) ?? [])].sort(), t).toEqual([
        'calls',
        'calls:bytes',
        'calls:expiry',
        'claim:*',
        'events',
        'seen:*',
        'upstream-fence',
        'upstream-lease',
        'upstream-tokens',
      ]);
  }, 30_000);

  it('minReplicas in a cluster: a webhook waits for its own primary’s replica (the WAIT goes with the append to the slot’s node)', async () => {
    const paused = tenants[2]!;
    const primary = await cluster.primaryOf(slotOf.get(paused)!);
    const replica = await cluster.replicaOf(primary);
    const pid = cluster.nodes.find((n) => n.port === replica)!.pid;
    const a = instances[0]!.relay;
    const post = (t: string, id: string) => {
      const body = envelope({ event_id: id, tenant: t });
      return postWebhook(a.webhookUrl(t), body, signed(body, secretOf(t)));
    };
    process.kill(pid, 'SIGSTOP');
    let held: number;
    let other: number;
    try {
      held = (await post(paused, 'wait-1')).status;
      other = (await post(tenants[0]!, 'wait-2')).status;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(held).toBe(503);
    expect(other).toBe(200);
    // The service's retry, once the replica answers: stored (its first try was), and acknowledged.
    await deliver(paused, 'wait-1');
    expect(await (await fetch(a.url + '/metrics')).text()).toMatch(
      /relay_storage_replica_wait_failures_total [1-9]/,
    );
  }, 20_000);

  it('minReplicas in a cluster: the events of one delivery (one script) are acknowledged by the WAIT sent with them, and refused while the replica is paused', async () => {
    const tenant = tenants[3]!;
    const store = instances[1]!.store;
    const batch = (prefix: string) =>
      [1, 2, 3].map((n) => ({
        tenant,
        eventId: `${prefix}-${n}`,
        event: 30011,
        to: '101',
        receivedAt: Date.now(),
        body: envelope({ event_id: `${prefix}-${n}`, tenant }),
      }));
    // A WAIT sent alone goes to any node of the cluster, which counts no replica of this write.
    for (let round = 0; round < 4; round++)
      expect((await store.appendAll(batch(`all-${round}`))).map((r) => r.status)).toEqual([
        'stored',
        'stored',
        'stored',
      ]);
    const primary = await cluster.primaryOf(slotOf.get(tenant)!);
    const replica = await cluster.replicaOf(primary);
    const replicaPid = cluster.nodes.find((n) => n.port === replica)!.pid;
    process.kill(replicaPid, 'SIGSTOP');
    try {
      await expect(store.appendAll(batch('all-held'))).rejects.toThrow(/replicas/);
    } finally {
      process.kill(replicaPid, 'SIGCONT');
    }
  }, 20_000);

  it('a primary killed: its replica is promoted, /readyz and the metrics say so, desktops resume with nothing lost or doubled', async () => {
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const victim = tenants[0]!;
    const slot = slotOf.get(victim)!;
    const port = await cluster.primaryOf(slot);
    const spared = tenants.find((t) => t !== victim && tenants.indexOf(t) >= 2)!;
    const desk = await TestClient.connect(b.relay.clientUrl(victim), 'tok-fo', {
      extensions: ['101'],
    });
    const other = await TestClient.connect(a.relay.clientUrl(spared), 'tok-fo2', {
      extensions: ['101'],
    });
    clients.push(desk, other);
    const readyz: number[] = [];
    let watching = true;
    let restarted = false;
    const watcher = (async () => {
      while (watching) {
        readyz.push(
          await fetch(a.relay.url + '/readyz').then(
            (r) => r.status,
            () => 0,
          ),
        );
        // Once the replica is promoted, the killed node is started again (as its supervisor
        // would) and rejoins as the new primary's replica: until it has synchronised, the
        // tenant's webhooks wait for a replica (minReplicas 1), answered 503 and retried.
        if (!restarted && (await cluster.settled(slot, port).catch(() => false))) {
          restarted = true;
          await cluster.restart(port);
        }
        await sleepReal(100);
      }
    })();
    for (let n = 0; n < 10; n++) await deliver(victim, `fo-${n}`);
    await desk.until(() => desk.events.length >= 10);
    // Where a desktop that goes away now resumes from (its cursor: the tenth event's).
    const left = (await (a.store as RedisStore).readAfter(victim, '0-0', 100)).events.find(
      (e) => e.eventId === 'fo-9',
    )!.cursor;
    cluster.kill(port);
    const killedAt = Date.now();
    let firstAckMs = -1;
    let refused = 0;
    for (let n = 10; n < 30; n++) {
      refused += await deliver(victim, `fo-${n}`);
      if (firstAckMs < 0) firstAckMs = Date.now() - killedAt;
      await deliver(spared, `sp-${n}`);
    }
    await expect
      .poll(() => cluster.settled(slot, port), { timeout: 10_000, interval: 100 })
      .toBe(true);
    await sleepReal(500);
    watching = false;
    await watcher;
    const want = Array.from({ length: 30 }, (_, n) => `fo-${n}`);
    await desk.until(() => desk.events.length >= 30, 15_000).catch(() => {});
    // The desktop kept its socket (the relay did not go): each event once, in order.
    expect(desk.eventIds(), JSON.stringify(await cluster.state())).toEqual(want);
    // One that left before the kill resumes from its cursor on the promoted primary.
    const back = await TestClient.connect(
      a.relay.clientUrl(victim),
      'tok-back',
      { extensions: ['101'] },
      left,
    );
    clients.push(back);
    await back.until(() => back.events.length >= 20);
    await sleepReal(200);
    expect(back.eventIds()).toEqual(want.slice(10));
    await other.until(() => other.events.length >= 20, 10_000);
    expect(other.eventIds()).toEqual(Array.from({ length: 20 }, (_, n) => `sp-${n + 10}`));
    const metrics = await (await fetch(a.relay.url + '/metrics')).text();
    console.log(
      `cluster failover: first webhook of the killed primary's tenant acknowledged ${firstAckMs} ms after the kill, delivered to the desktop ${desk.arrivals[10]! - killedAt} ms after it (${refused} refusals, retried); /readyz ${readyz.join(',')}`,
    );
    expect(readyz).toContain(503);
    expect(readyz.at(-1)).toBe(200);
    expect(metrics).toMatch(/relay_storage_primary_changes_total [1-9]/);
    expect(metrics).toMatch(/relay_storage_cluster_ok 1/);
    const ready = (await (await fetch(a.relay.url + '/readyz')).json()) as {
      primary: string;
      cluster: { state: string; primaries: number };
    };
    expect(ready.cluster).toMatchObject({ state: 'ok', primaries: 3 });
    expect(ready.primary.split(',')).not.toContain(`127.0.0.1:${port}`);
    expect(ready.primary.split(',')).toContain(`127.0.0.1:${await cluster.primaryOf(slot)}`);
    // What the tenant's slot held before the kill is on the promoted primary: the call memory,
    // the claim, and the lease's fencing counter (the next term's number is the next one).
    const store = a.store as RedisStore;
    expect((await store.callMemory.read(victim, 'call-1')).memory).toBe('memory');
    expect(await store.claimCall!(victim, 'call-1', 'bob', 60_000)).toBe('alice');
    await expect
      .poll(() => store.acquireLease(victim, 'instance-b', 10_000), {
        timeout: 12_000,
        interval: 200,
      })
      .toMatch(/^instance-b#2$/);
  }, 60_000);
});
