/**
 * Black box, issue 40 items 1-3 together: a Redis Cluster failover under relays in gateway mode.
 *
 * A Redis Cluster of six real redis-server processes (rigs/relay/cluster-support.ts: three
 * primaries, a replica each, cluster-node-timeout 1 s), three relay processes in gateway mode on
 * it (`storage.cluster`, `minReplicas` 1, a 3 s upstream lease), and two tenants whose `{tenant}`
 * slots are on different primaries (asked of the cluster): one of the standard service, one a
 * Yeastar P-Series reporting one member a report (the simulator's default `member` style). Each
 * tenant has its own simulator (the phone system: the relays' upstream streams, and its webhooks
 * to every instance) and its own headless runner reading one relay (`--event-source relay`).
 *
 * Rings flow to both tenants; a ring group call (101 and 102) rings on the Yeastar tenant and pops
 * at 101; then the primary of the Yeastar tenant's slot is killed (SIGKILL) and its replica
 * promoted, and the killed node is started again (its supervisor: it rejoins as the new primary's
 * replica; with `minReplicas` 1 the slot's webhooks are refused until then); the ring group call
 * is answered at 102 after the failover. Asserted:
 * - every ring of both tenants popped once, fresh, with its caller (0 missed, doubled, stale);
 * - one upstream per tenant: the relays' /healthz, sampled all along, never say `connected` at two
 *   instances for longer than the lease, and at the end exactly one instance holds each tenant's
 *   stream and each simulator counts one socket on its stream;
 * - the ring group call rung before the kill and answered after it is dismissed at 101 with an
 *   `ended` the store holds for 101. Whether it came, as in one process, from the memory of
 *   101's leg at 102's answer (`ended`, no member status) is printed, not asserted: a known
 *   defect loses it now and then (test/relay/yeastar-memory-append-redis.test.ts);
 * - the standard tenant never noticed: its runner never left `connected`, the same instance held
 *   its stream all along.
 * Printed: kill -> first pop for each tenant (of any ring, and of a ring sent after the kill), and
 * kill -> the replica promoted. No timed assertion.
 *
 * `CLUSTER_KILL=standard` kills the standard tenant's primary instead (then the Yeastar tenant is
 * the one that must not notice, and the ring group call is answered after the kill all the same);
 * `CLUSTER_NO_RESTART=1` leaves the killed node down (the promoted primary without a replica: every
 * append's WAIT runs to its time-out; before f2a9d36 the holder's renewals and the call memory
 * waited behind them and the tenant had no upstream for seconds). `CLUSTER_LOGS=1` prints what the
 * relays logged of upstreams, leases and storage, in ms from the kill.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { redisAvailable } from '../../rigs/relay/helpers.ts';
import { startRedisCluster, type RedisClusterNodes } from '../../rigs/relay/cluster-support.ts';
import { spawnRelay, type RelayProcess } from '../../rigs/relay/relay-process.ts';
import { SimProcess, startRunner, type RunnerProcess } from './services.ts';
import { RingLedger } from './ledger.ts';

const file = 'test/blackbox/relay-gateway-failover-redis-cluster.test.ts';
const LEASE_MS = 3_000;
const PREFIX = 'gwc:';
const WEBHOOK_SECRET = 'whsec-cluster-gw-0123456789abcdef'; // 32 characters, as a PBX's
const KILL: 'standard' | 'yeastar' =
  process.env.CLUSTER_KILL === 'standard' ? 'standard' : 'yeastar';
const NO_RESTART = process.env.CLUSTER_NO_RESTART === '1';
const CANDIDATES = ['acme', 'zeta', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma', 'theta'];

let group: ProcessGroup | undefined;
let cluster: RedisClusterNodes | undefined;
let reader: Cluster | undefined;
afterEach(async () => {
  reader?.disconnect();
  await group?.cleanup();
  await cluster?.stop();
  group = cluster = reader = undefined;
});

interface Tenant {
  kind: 'standard' | 'yeastar';
  name: string;
  slot: number;
  primary: number;
  sim: SimProcess;
  runner?: RunnerProcess;
  ledger?: RingLedger;
}

/** Each relay's /healthz upstream state of `tenant` ('down' when it does not answer). */
async function upstreamStates(relays: RelayProcess[], tenant: string): Promise<string[]> {
  return Promise.all(
    relays.map(async (r) => {
      try {
        const res = await fetch(`${r.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
        const body = (await res.json()) as { upstream?: Record<string, { state: string }> };
        return body.upstream?.[tenant]?.state ?? 'none';
      } catch {
        return 'down';
      }
    }),
  );
}

describe.skipIf(!redisAvailable(file))(
  'gateway mode on a Redis Cluster: a primary failed over',
  () => {
    it(
      'two tenants on different primaries: nothing lost or doubled, one upstream each, the call memory kept, the other tenant unaware',
      { timeout: 120_000 },
      async () => {
        const t0 = Date.now();
        const marks: string[] = [];
        const mark = (what: string) => marks.push(`${what} ${Date.now() - t0}`);
        group = new ProcessGroup();
        cluster = await startRedisCluster({ primaries: 3, replicasEach: 1 });
        // Two tenants whose slots are on different primaries, asked of the cluster.
        const picked: { name: string; slot: number; primary: number }[] = [];
        for (const name of CANDIDATES) {
          const slot = await cluster.keyslot(`{${name}}`);
          const primary = await cluster.primaryOf(slot);
          if (picked.every((p) => p.primary !== primary)) picked.push({ name, slot, primary });
          if (picked.length === 2) break;
        }
        expect(picked).toHaveLength(2);
        mark('cluster');
        const [std, yst] = await Promise.all(
          (['standard', 'yeastar'] as const).map(async (kind, i): Promise<Tenant> => {
            const sim = await new SimProcess(group!, {
              tenant: picked[i]!.name,
              phoneSystem: kind === 'standard' ? 'standard' : 'yeastar-p-series',
              tokenLimit: kind === 'yeastar' ? 8 : undefined,
            }).start();
            return { kind, ...picked[i]!, sim };
          }),
        );
        const tenants = [std!, yst!];
        mark('simulators');
        const env = {
          STD_KEY: std!.sim.key,
          STD_SECRET: std!.sim.secret,
          YST_KEY: yst!.sim.key,
          YST_SECRET: yst!.sim.secret,
        };
        const config = {
          host: '127.0.0.1',
          tenants: {
            [std!.name]: {
              baseUrl: std!.sim.baseUrl,
              secrets: [WEBHOOK_SECRET],
              gateway: { apiKeyEnv: 'STD_KEY', secretEnv: 'STD_SECRET' },
            },
            [yst!.name]: {
              baseUrl: yst!.sim.baseUrl,
              secrets: [WEBHOOK_SECRET],
              phoneSystem: 'yeastar-p-series',
              gateway: { apiKeyEnv: 'YST_KEY', secretEnv: 'YST_SECRET' },
            },
          },
          storage: {
            kind: 'redis',
            keyPrefix: PREFIX,
            cluster: { nodes: cluster.addresses },
            minReplicas: 1,
            upstreamLeaseMs: LEASE_MS,
          },
          shutdownGraceMs: 2_000,
        };
        const relays = await Promise.all(
          [0, 1, 2].map(async () => {
            const r = await spawnRelay({ config, env });
            group!.adopt(r.pid);
            return r;
          }),
        );
        mark('relays');
        /** What the relays logged of their upstreams, leases and storage (for a failure). */
        let logZero = 0; // the kill's time, once killed
        const relayLogs = () =>
          relays
            .map(
              (r, i) =>
                `--- relay ${i}\n${r
                  .logLines()
                  .filter((l) => /upstream|lease|redis|storage|cluster|memory|stored/i.test(l.msg))
                  .map((l) => {
                    const at = Date.parse(String(l.time)) - logZero;
                    const err = (l.error as { message?: string } | undefined)?.message ?? '';
                    return `${at} ${String(l.tenant ?? '')} ${l.msg} ${String(l.why ?? '')}${err}`;
                  })
                  .slice(-60)
                  .join('\n')}`,
            )
            .join('\n');
        // The phone systems' webhooks to every instance (one destination URL each).
        for (const t of tenants)
          for (const r of relays)
            await t.sim.control('POST', 'webhooks', {
              url: `${r.url}/webhook/${t.name}`,
              secret: WEBHOOK_SECRET,
            });
        for (const t of tenants) {
          t.runner = startRunner(group, {
            baseUrl: t.sim.baseUrl,
            key: t.sim.key,
            secret: t.sim.secret,
            phoneSystem: t.kind === 'standard' ? 'standard' : 'yeastar-p-series',
            args: [
              ...['--relay-url', relays[0]!.url.replace(/^http/, 'ws')],
              ...['--relay-tenant', t.name, '--event-source', 'relay'],
            ],
          });
          t.ledger = new RingLedger(t.runner);
        }
        for (const t of tenants) await t.runner!.waitForState('connected', 30_000);

        // /healthz of every relay for both tenants, sampled all along: who says connected.
        const samples: { at: number; tenant: string; states: string[] }[] = [];
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            for (const t of tenants)
              samples.push({
                at: Date.now(),
                tenant: t.name,
                states: await upstreamStates(relays, t.name),
              });
            await sleep(150);
          }
        })();
        const holderOf = async (t: Tenant, withinMs: number): Promise<number> => {
          const started = Date.now();
          for (;;) {
            const states = await upstreamStates(relays, t.name);
            const on = [0, 1, 2].filter((i) => states[i] === 'connected');
            if (on.length === 1) return on[0]!;
            if (Date.now() - started > withinMs)
              throw new Error(`${t.kind}: no single holder: ${states.join(', ')}\n${relayLogs()}`);
            await sleep(100);
          }
        };
        for (const t of tenants) await holderOf(t, 6 * LEASE_MS);
        const readyAt = Date.now();
        mark('runners and holders');

        // Rings to 101 of both tenants, one every 700 ms each; each call ended once it popped (or
        // after 15 s, when what is missing shows in the ledger).
        let ringing = true;
        const ends: Promise<void>[] = [];
        const ringLoop = async (t: Tenant) => {
          while (ringing) {
            const id = await t.ledger!.ring(t.sim);
            ends.push(
              t
                .runner!.waitFor(() => t.ledger!.popCount(id) > 0, 'the pop', 15_000)
                .catch(() => {})
                .then(() => sleep(300))
                .then(() => t.sim.setState(id, 'ended').catch(() => {})),
            );
            await sleep(700);
          }
        };
        const loops = tenants.map((t) => ringLoop(t));
        await sleep(2_000);

        // A ring group call (101 and 102) on the Yeastar tenant, popped at 101 before the kill.
        const groupCall = await yst!.sim.ring('+442079460958', ['101', '102']);
        await yst!.runner!.waitFor(
          () => yst!.runner!.pops().some((p) => p.call_id === groupCall),
          'the ring group call to pop at 101',
          10_000,
        );
        await sleep(300); // its 102 ring reported too (one member a report)

        const victim = KILL === 'yeastar' ? yst! : std!;
        const bystander = KILL === 'yeastar' ? std! : yst!;
        const bystanderHolder = await holderOf(bystander, 1_000);
        const bystanderLines = bystander.runner!.lines.length;
        const killedPort = await cluster.primaryOf(victim.slot);
        const killAt = Date.now();
        logZero = killAt;
        cluster.kill(killedPort);
        let promotedMs: number;
        for (;;) {
          if (await cluster.settled(victim.slot, killedPort).catch(() => false)) {
            promotedMs = Date.now() - killAt;
            break;
          }
          if (Date.now() - killAt > 20_000)
            throw new Error(`no failover: ${JSON.stringify(await cluster.state())}`);
          await sleep(50);
        }
        mark('promoted');
        // Its supervisor starts the killed node again: it rejoins as the new primary's replica
        // (with minReplicas 1, the slot's webhooks are refused until a replica has them again).
        if (!NO_RESTART) {
          await cluster.restart(killedPort);
          mark('killed node back');
        }
        // The ring group call answered at 102 after the failover.
        await yst!.sim.setState(groupCall, 'answered', '102');
        await yst!.runner!.waitFor(
          () => yst!.runner!.lines.some((l) => l.type === 'dismiss' && l.call_id === groupCall),
          'the ring group call to be dismissed at 101',
          20_000,
        );
        // Rings go on until a ring sent after the kill popped for both tenants, and 3 s more.
        const firstPopAfter = (t: Tenant, sentAfter: boolean) => {
          const sent = t.ledger!.sentTimes();
          return t
            .runner!.pops()
            .find(
              (p) => p.at > killAt && (!sentAfter || (sent.get(String(p.call_id)) ?? 0) > killAt),
            );
        };
        for (const t of tenants)
          await t.runner!.waitFor(
            () => firstPopAfter(t, true) !== undefined,
            `${t.kind}: a pop after the kill`,
            30_000,
          );
        await sleep(3_000);
        ringing = false;
        mark('rings stopped');
        await Promise.all(loops);
        await Promise.all(ends);
        for (const t of tenants) await t.ledger!.settle(t.sim, 15_000);
        await sleep(2 * LEASE_MS); // any second holder would have had to give up by now
        sampling = false;
        await sampler;

        // ---- figures ----
        const holdersEnd = await Promise.all(tenants.map((t) => holderOf(t, 2 * LEASE_MS)));
        const socketsEnd = await Promise.all(
          tenants.map(
            async (t) =>
              (await t.sim.control<{ stats: { wsOpen: number } }>('GET', 'stats')).stats.wsOpen,
          ),
        );
        // The longest spell two instances said connected at once, per tenant.
        const overlap = (tenant: string) => {
          let longest = 0;
          let since: number | undefined;
          for (const s of samples.filter((x) => x.tenant === tenant)) {
            const two = s.states.filter((x) => x === 'connected').length > 1;
            if (two) since ??= s.at;
            else since = undefined;
            if (since !== undefined) longest = Math.max(longest, s.at - since);
          }
          return longest;
        };
        /** The longest ring -> pop of the tenant's rings sent in [from, to). */
        const slowest = (t: Tenant, from: number, to: number) => {
          let worst = 0;
          for (const [id, sentAt] of t.ledger!.sentTimes()) {
            if (sentAt < from || sentAt >= to) continue;
            const pop = t.runner!.pops().find((p) => p.call_id === id);
            if (pop) worst = Math.max(worst, pop.at - sentAt);
          }
          return worst;
        };
        // The holders each tenant had after the kill (indexes of the relays), in order.
        const holders = (tenant: string) => {
          const seen: string[] = [];
          for (const s of samples.filter((x) => x.tenant === tenant && x.at >= readyAt)) {
            const on = s.states.map((x, i) => (x === 'connected' ? i : -1)).filter((i) => i >= 0);
            const key = on.length ? on.join('+') : '-';
            if (seen.at(-1)?.split('@')[0] !== key) seen.push(`${key}@${s.at - killAt}`);
          }
          return seen.join(' > ');
        };
        // What the store holds for the ring group call at 101: the envelopes the decoder made.
        reader = new Cluster(
          cluster.addresses.map((a) => ({ host: '127.0.0.1', port: Number(a.split(':')[1]) })),
          {
            clusterRetryStrategy: () => 200,
            redisOptions: { connectTimeout: 1_000 },
          },
        );
        reader.on('error', () => {});
        const entries = (await reader.xrange(`${PREFIX}{${yst!.name}}:events`, '-', '+')) as [
          string,
          string[],
        ][];
        const groupAt101 = entries
          .map(
            ([, fields]) =>
              JSON.parse(fields[fields.indexOf('body') + 1]!) as {
                data?: Record<string, unknown>;
                event_id: string;
              },
          )
          .filter((e) => e.data?.call_id === groupCall && e.data?.to === '101')
          .map((e) => ({
            state: e.data!.state,
            member_status: e.data!.member_status,
            event_id: e.event_id,
          }));
        const dismiss = yst!.runner!.lines.find(
          (l) => l.type === 'dismiss' && l.call_id === groupCall,
        );

        const figures = Object.fromEntries(
          tenants.map((t) => {
            const f = t.ledger!.figures();
            const any = firstPopAfter(t, false);
            const fresh = firstPopAfter(t, true);
            return [
              t.kind,
              {
                tenant: t.name,
                slot: t.slot,
                sent: f.sent,
                popped: f.popped,
                missed: f.missed.length,
                doubled: f.doubled.length,
                stale: f.stale.length,
                unexpected: f.unexpected.filter((id) => id !== groupCall).length,
                wrongCaller: f.wrongCaller.length,
                killToFirstPopMs: any ? any.at - killAt : null,
                killToFirstNewRingPopMs: fresh ? fresh.at - killAt : null,
                // Ring -> pop of the rings sent before the kill, and of those sent from 1 s
                // before it to 3 s after (the failover's window): the longest of each.
                slowestPopBeforeMs: slowest(t, -Infinity, killAt - 1_000),
                slowestPopAroundKillMs: slowest(t, killAt - 1_000, killAt + 3_000),
                holders: holders(t.name),
                longestTwoHoldersMs: overlap(t.name),
              },
            ];
          }),
        );
        console.log(
          `cluster gateway failover (${KILL}'s primary :${killedPort} killed; ${((Date.now() - t0) / 1000).toFixed(1)} s in all): promoted ${promotedMs} ms after the kill; ms from the start: ${marks.join(', ')}\n` +
            `${JSON.stringify(figures, null, 1)}\n` +
            `ring group call ${groupCall} at 101, as one process (ended at the answer): ${groupAt101.some((e) => e.state === 'ended' && e.member_status === '') ? 'yes' : 'NO'}; dismiss ${JSON.stringify(dismiss && { state: dismiss.state, event_id: dismiss.event_id })}; stored ${JSON.stringify(groupAt101)}\n` +
            `sockets at the phone systems ${socketsEnd.join(', ')}; holders at the end ${holdersEnd.join(', ')}`,
        );
        if (process.env.CLUSTER_LOGS === '1') console.log(relayLogs()); // ms from the kill

        for (const t of tenants) {
          const f = t.ledger!.figures();
          expect(f.sent, t.kind).toBeGreaterThan(5);
          expect(
            [
              f.missed,
              f.doubled,
              f.stale,
              f.unexpected.filter((id) => id !== groupCall),
              f.wrongCaller,
            ],
            t.kind,
          ).toEqual([[], [], [], [], []]);
          expect(overlap(t.name), t.kind).toBeLessThanOrEqual(LEASE_MS);
        }
        expect(socketsEnd).toEqual([1, 1]);
        // 101's runner dismissed the ring group call, with an `ended` the store holds for 101.
        expect(groupAt101.map((e) => e.state)).toContain('ringing');
        expect(dismiss).toBeDefined();
        expect(groupAt101.filter((e) => e.state === 'ended').map((e) => e.event_id)).toContain(
          dismiss!.event_id,
        );
        // As one process: the memory of 101's leg, written before the kill, ends its ring at
        // 102's answer (`ended`, no member status), before 101's own BYE. Not asserted: 3 runs of 7
        // lost it (with CLUSTER_LOGS=1: the append pipelines answered MOVED just after the
        // promotion, when the answer came, while its call memory, written by a command that follows
        // MOVED, was kept; the caller's ANSWERED was decoded before the retry), a known defect
        // reproduced and marked `it.fails`
        // in test/relay/yeastar-memory-append-redis.test.ts. Printed above ("as one process").
        // The other tenant never noticed: its runner stayed connected, its holder stayed.
        const bystanderStatuses = bystander
          .runner!.lines.slice(bystanderLines)
          .filter((l) => l.type === 'status')
          .map((l) => l.state);
        expect(bystanderStatuses.filter((s) => s !== 'connected')).toEqual([]);
        expect(figures[bystander.kind]!.holders.split(' > ').map((h) => h.split('@')[0])).toEqual([
          String(bystanderHolder),
        ]);
      },
    );
  },
);
