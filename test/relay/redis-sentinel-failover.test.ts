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
  startTokenService,
} from '../../rigs/relay/helpers.ts';
import {
  sentinelAvailable,
  startSentinelGroup,
  type SentinelGroup,
} from '../../rigs/relay/sentinel-support.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { runRelayWith } from '../../rigs/relay/relay-process.ts';

// Real processes: a primary, a replica and three sentinels (quorum 2, down after 1,000 ms: sentinel-support.ts says why not 300), the
// relay's two instances in this process with storage.sentinel and minReplicas 1. The primary is
// killed (SIGKILL) while desktops receive and webhooks arrive; the service's retries of a 503
// are played by the sender. Scale: DESKTOPS (100 here; SENTINEL_DESKTOPS=1000 by hand).
const file = 'test/relay/redis-sentinel-failover.test.ts';
const haveAll = redisAvailable(file) && sentinelAvailable(file);
const DESKTOPS = Number(process.env.SENTINEL_DESKTOPS ?? 100);
const BEFORE = 30; // webhooks before the kill
const AFTER = 30; // webhooks once the sender got its first 200 after the kill
const tmp = useTempDir('relay-sentinel-check-');

describe.skipIf(!haveAll)('Redis Sentinel failover under load', () => {
  let group: SentinelGroup;
  let service: Awaited<ReturnType<typeof startTokenService>>;
  const instances: { relay: RelayServer; store: EventStore }[] = [];
  const clients: TestClient[] = [];

  beforeAll(async () => {
    group = await startSentinelGroup();
    service = await startTokenService({ has: (t: string) => t.startsWith('tok-') });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const i of instances) {
      await i.relay.close();
      await i.store.close();
    }
    await service?.close();
    await group?.stop();
  }, 30_000);

  it('--check-config finds the primary through the sentinels named in the environment; a wrong name is refused naming it', async () => {
    const env = {
      RELAY_REDIS_SENTINELS: group.sentinels.join(','),
      RELAY_REDIS_SENTINEL_NAME: group.name,
      RELAY_REDIS_MIN_REPLICAS: '1',
    };
    const good = await runRelayWith(tmp.path, {}, ['--check-config'], env);
    expect(good.err).toBe('');
    expect(good.code).toBe(0);
    expect(good.out).toContain(
      `storage: the Redis primary "${group.name}" of the sentinels ${group.sentinels.join(', ')}, a webhook answered once 1 replica(s) have it`,
    );
    expect(good.out).toMatch(/storage opened and closed again: redis answers/);
    const wrong = await runRelayWith(tmp.path, {}, ['--check-config'], {
      ...env,
      RELAY_REDIS_SENTINEL_NAME: 'nosuch',
    });
    expect(wrong.code, wrong.out + wrong.err).toBe(1);
    expect(wrong.out + wrong.err).toMatch(
      /cannot connect to the Redis primary "nosuch" of the sentinels/,
    );
  }, 40_000);

  // Skipped, an open defect of issue 40: on main this failed 3 runs of 3 on 2026-11-28 (twice
  // "timed out waiting for every desktop to have every acknowledged webhook", once the 90 s
  // limit), on a loaded and on an idle machine, while it passed in the branch that wrote it.
  // Until it holds, Sentinel failover is not claimed to keep acknowledged webhooks
  // (deploy/relay/README.md says so). Not weakened: it must pass as written before it runs again.
  it.skip('(open defect, issue 40: acknowledged webhooks after a failover not all delivered) desktops resume on the promoted primary with every acknowledged webhook, in one order; /readyz and metrics say what happened', async () => {
    const config = relayConfig(
      { acme: { baseUrl: service.baseUrl, secrets: [SECRET] } },
      {
        storage: {
          kind: 'redis',
          keyPrefix: 'ha:',
          sentinel: { name: group.name, nodes: group.sentinels },
          minReplicas: 1,
          replicaTimeoutMs: 500,
          commandTimeoutMs: 1_000,
        },
      },
    );
    for (let i = 0; i < 2; i++) {
      const store = await openStore(config, systemClock, silentLogger);
      const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
      instances.push({ relay, store });
    }
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const t0 = Date.now();
    for (let i = 0; i < DESKTOPS; i += 50)
      clients.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(50, DESKTOPS - i) }, (_, j) =>
            TestClient.connect((j % 2 ? a : b).relay.clientUrl('acme'), `tok-${i + j}`, {
              extensions: ['101'],
            }),
          ),
        )),
      );
    const connectMs = Date.now() - t0;
    const oldPrimary = await group.currentPrimary();
    expect(oldPrimary).toBe(`127.0.0.1:${group.primary.port}`);

    // The service: one webhook every 20 ms (50/s), alternating instances, each retried after a
    // non-200 until it is acknowledged, as the service retries.
    const sent: string[] = [];
    let refused = 0;
    const refusedIds = new Set<string>();
    let firstAckAfterKill = 0;
    let killedAt = 0;
    let firstAfterKill = -1;
    let ackedAfterKill = 0;
    const send = async (n: number) => {
      const id = `ha-${n}`;
      const body = envelope({ event_id: id });
      for (let attempt = 0; ; attempt++) {
        const target = (n + attempt) % 2 ? a : b;
        const status = await postWebhook(target.relay.webhookUrl('acme'), body, signed(body)).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) break;
        refused += 1;
        refusedIds.add(id);
        await sleepReal(100);
      }
      sent.push(id);
      if (killedAt && !firstAckAfterKill) firstAckAfterKill = Date.now();
      if (killedAt && firstAfterKill < 0) firstAfterKill = n;
      if (killedAt) ackedAfterKill += 1;
    };
    const readyz: number[] = [];
    // Once the replica is promoted, the killed primary is started again (as its supervisor
    // would) and the sentinels make it the new replica: until it has synchronised, webhooks wait
    // for a replica (minReplicas 1) and are answered 503, retried.
    let restartedAt = 0;
    const watching = (async () => {
      while (ackedAfterKill < AFTER) {
        readyz.push((await fetch(a.relay.url + '/readyz')).status);
        if (killedAt && !restartedAt && (await group.currentPrimary()) !== oldPrimary) {
          restartedAt = Date.now();
          await group.restartPrimary();
        }
        await sleepReal(100);
      }
    })();
    for (let n = 0; ackedAfterKill < AFTER; n++) {
      if (n === BEFORE) {
        process.kill(group.primary.pid, 'SIGKILL');
        killedAt = Date.now();
      }
      await send(n);
      await sleepReal(20);
    }
    await watching;
    const sendMs = Date.now() - t0 - connectMs;

    const everyone = () => clients.every((c) => new Set(c.eventIds()).size === sent.length);
    await waitFor(everyone, 'every desktop to have every acknowledged webhook', {
      timeoutMs: 20_000,
      detail: () => `first desktop has ${new Set(clients[0]!.eventIds()).size} of ${sent.length}`,
    });
    const catchUpMs = Date.now() - t0 - connectMs - sendMs;
    // Nothing lost, one order: each desktop's first sight of each event is the order acknowledged
    // (a desktop handles each event_id once: src-main/core/events/dedupe.ts). A second copy on the
    // wire is only possible for a webhook the kill cut (handed over live by the old primary, not
    // yet on a replica, answered 503, stored again by the retry): never for one acknowledged.
    let doubled = 0;
    for (const c of clients) {
      const ids = c.eventIds();
      expect([...new Set(ids)]).toEqual(sent);
      doubled += ids.length - new Set(ids).size;
      for (const [i, id] of ids.entries())
        if (ids.indexOf(id) !== i) expect(refusedIds, `${id} came twice`).toContain(id);
    }
    // The gap: from the kill to the first delivery of a webhook sent after it.
    const firstId = `ha-${firstAfterKill}`;
    const firstDelivery = Math.min(
      ...clients.map((c) => c.arrivals[c.eventIds().indexOf(firstId)] ?? Infinity),
    );
    const newPrimary = await group.currentPrimary();
    expect(newPrimary).toBe(`127.0.0.1:${group.replicas[0]!.port}`);
    const ready = (await (await fetch(a.relay.url + '/readyz')).json()) as Record<string, unknown>;
    console.log(
      JSON.stringify({
        sentinelFailover: {
          desktops: DESKTOPS,
          webhooks: sent.length,
          refusedDuringFailover: refused,
          gapKillToFirstDeliveryMs: firstDelivery - killedAt,
          gapKillToFirstAcknowledgedMs: firstAckAfterKill - killedAt,
          promotionSeenAfterMs: restartedAt - killedAt,
          readyzStatusesSeen: [...new Set(readyz)],
          doubledOnTheWire: doubled,
          primaryChangesSeenByA: ready.primaryChanges,
          newPrimary: newPrimary === oldPrimary ? 'the old one, again' : 'the replica',
          phasesMs: { connect: connectMs, send: sendMs, catchUp: catchUpMs },
        },
      }),
    );

    expect(ready).toMatchObject({ ok: true, storage: 'redis', primary: newPrimary });
    // At least the one failover; more when the sentinels' first choice was replaced by another
    // (each server the relay was ready on counts).
    expect(ready.primaryChanges).toBeGreaterThanOrEqual(1);
    const metrics = await (await fetch(b.relay.url + '/metrics')).text();
    expect(metrics).toMatch(/^relay_storage_primary_changes_total [1-9]\d*$/m);
    expect(metrics).toMatch(/^relay_storage_connected 1$/m);
  }, 90_000);
});
