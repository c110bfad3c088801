/**
 * Black box, issue 40 item 2 ("one upstream per tenant"): three relay processes in gateway mode
 * on one redis-server, one Yeastar P-Series tenant (the simulator as a process). Exactly one
 * instance keeps the tenant's stream (the simulator counts the sockets open on its stream,
 * `wsOpen`), the others stand by (/healthz `standby`); when the holder is killed (SIGKILL), or
 * frozen (SIGSTOP: as seen from Redis, a partition), another takes the stream over within about
 * 1.2 leases; a frozen holder that comes back (SIGCONT) finds its term over on its own clock and
 * stands by: its socket closes and what it read while frozen is not stored (fenced).
 *
 * The lease is 3 s here (`storage.upstreamLeaseMs`), so that the takeovers fit a short test.
 *
 * Tokens (at most two live per tenant, gateway/term-tokens.ts): each term writes its access
 * tokens down beside the lease, and the next holder revokes what a killed or frozen holder left
 * before it signs in, so after each takeover the phone system counts one valid token (the
 * holder's), and never more than two. Before (main at 1891eb8) it printed valid 1, then 2 after
 * the SIGKILL's takeover (the killed holder's token lives 30 minutes), then 3 (the peak) after
 * the SIGSTOP's, and 2 once the frozen one came back and revoked its own. A second SIGKILL (the
 * last holder; the one that was frozen takes over) leaves one valid too.
 *
 * And a crash loop (two instances; the holder killed and restarted 4 times, as a restart policy
 * would): one valid token before each kill and after the last takeover. Before (main at 1891eb8):
 * 1, 2, 3, 4, 5 ("expected [ 1, 2, 3, 4, 5 ] to deeply equal [ 1, 1, 1, 1, 1 ]"), each killed
 * holder's token left to expire (30 minutes): 8 kills use a P-Series application's tokens up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { REDIS_BIN, RedisProcess, RelayProcess, SimProcess } from './services.ts';

const LEASE_MS = 3_000;
let group: ProcessGroup | undefined;
afterEach(async () => {
  await group?.cleanup();
  group = undefined;
});

async function upstreamState(relay: RelayProcess, tenant: string): Promise<string> {
  try {
    const res = await fetch(`${relay.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as { upstream?: Record<string, { state: string }> };
    return body.upstream?.[tenant]?.state ?? 'none';
  } catch {
    return 'down';
  }
}

async function fencedCount(relay: RelayProcess): Promise<number> {
  const text = await (await fetch(`${relay.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => /relay_upstream_events_total\{.*result="fenced"/.test(l));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe.skipIf(!existsSync(REDIS_BIN))('gateway mode, three instances on one Redis', () => {
  it(
    'one stream to the phone system; another instance takes it over when the holder is killed or frozen',
    { timeout: 120_000 },
    async () => {
      group = new ProcessGroup();
      const redis = await new RedisProcess(group).start();
      const sim = await new SimProcess(group, {
        phoneSystem: 'yeastar-p-series',
        tokenLimit: 8,
        traffic: 5,
      }).start();
      const env = { ...process.env, ACME_API_KEY: sim.key, ACME_API_SECRET: sim.secret };
      const relays = await Promise.all(
        [0, 1, 2].map((i) =>
          new RelayProcess(group!, {
            tenant: sim.tenant,
            serviceUrl: sim.baseUrl,
            phoneSystem: 'yeastar-p-series',
            redisUrl: redis.url,
            upstreamLeaseMs: LEASE_MS,
            gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
            env,
          })
            .start()
            .then((r) => ({ i, r })),
        ),
      );
      // The phone system's tokens of the application (the simulator's count): issued, revoked,
      // valid now and at most so far.
      const tokens = async () => {
        const { getToken, refreshToken, delToken, tokensValid, tokensValidPeak } = (
          await sim.control<{ stats: Record<string, number> }>('GET', 'stats')
        ).stats;
        return { getToken, refreshToken, delToken, tokensValid, tokensValidPeak };
      };
      const wsOpen = async () =>
        (await sim.control<{ stats: { wsOpen: number } }>('GET', 'stats')).stats.wsOpen;
      const states = () => Promise.all(relays.map(({ r }) => upstreamState(r, sim.tenant)));
      /** Waits until exactly one of `among` says connected: its index, and how long it took. */
      const oneConnected = async (among: number[], withinMs: number) => {
        const started = Date.now();
        for (;;) {
          const now = await states();
          const connected = among.filter((i) => now[i] === 'connected');
          if (connected.length === 1) return { holder: connected[0]!, ms: Date.now() - started };
          if (Date.now() - started > withinMs)
            throw new Error(`no single holder among ${among.join(',')}: ${now.join(', ')}`);
          await sleep(100);
        }
      };

      // One holder, two standing by, one socket at the phone system (before: three).
      const first = await oneConnected([0, 1, 2], 20_000);
      await sleep(LEASE_MS); // a few renewals: still one
      const steady = await states();
      const sockets = await wsOpen();
      console.log(
        `gateway lease: states ${steady.join(', ')}; sockets at the PBX ${sockets}; tokens ${JSON.stringify(await tokens())}`,
      );
      expect(sockets).toBe(1);
      expect(steady.filter((s) => s === 'connected')).toHaveLength(1);
      expect(steady.filter((s) => s === 'standby')).toHaveLength(2);

      // The holder is killed: another takes over.
      relays[first.holder]!.r.proc.signal('SIGKILL');
      await relays[first.holder]!.r.proc.exit;
      const alive = [0, 1, 2].filter((i) => i !== first.holder);
      const second = await oneConnected(alive, 4 * LEASE_MS);
      const afterKill = await tokens();
      console.log(
        `gateway lease: takeover after SIGKILL of the holder: ${second.ms} ms; tokens ${JSON.stringify(afterKill)}`,
      );
      // The killed holder's token was revoked by the new holder: only the new holder's is live.
      expect(afterKill.tokensValid).toBe(1);

      // The new holder is frozen (SIGSTOP): to Redis, as a partition. The last one takes over.
      const frozen = relays[second.holder]!.r;
      frozen.proc.signal('SIGSTOP');
      const last = alive.find((i) => i !== second.holder)!;
      const third = await oneConnected([last], 4 * LEASE_MS);
      const afterStop = await tokens();
      console.log(
        `gateway lease: takeover after SIGSTOP of the holder: ${third.ms} ms; tokens ${JSON.stringify(afterStop)}`,
      );
      expect(afterStop.tokensValid).toBe(1);
      await sleep(1_000); // frames reach the frozen instance's socket meanwhile
      frozen.proc.signal('SIGCONT');
      // It finds its term over on its own clock: it stands by and closes its socket.
      const back = Date.now();
      let frozenState: string;
      let open: number;
      for (;;) {
        frozenState = await upstreamState(frozen, sim.tenant);
        open = await wsOpen();
        if ((frozenState === 'standby' && open === 1) || Date.now() - back > 10_000) break;
        await sleep(100);
      }
      const fenced = await fencedCount(frozen);
      console.log(
        `gateway lease: the frozen holder after SIGCONT: ${frozenState} after ${Date.now() - back} ms; sockets at the PBX ${open}; frames it read refused (fenced) ${fenced}; tokens ${JSON.stringify(await tokens())}`,
      );
      expect(frozenState).toBe('standby');
      expect((await tokens()).tokensValidPeak).toBeLessThanOrEqual(2);
      expect(open).toBe(1);
      expect(await upstreamState(relays[last]!.r, sim.tenant)).toBe('connected');

      // A second holder killed (as a crash loop would): the one that was frozen takes over, and
      // revokes the killed one's token again: still one live.
      relays[last]!.r.proc.signal('SIGKILL');
      await relays[last]!.r.proc.exit;
      const fourth = await oneConnected([second.holder], 4 * LEASE_MS);
      const afterKill2 = await tokens();
      console.log(
        `gateway lease: takeover after a second SIGKILL: ${fourth.ms} ms; tokens ${JSON.stringify(afterKill2)}`,
      );
      expect(afterKill2.tokensValid).toBe(1);
      expect(afterKill2.tokensValidPeak).toBeLessThanOrEqual(2);
    },
  );

  it(
    'a holder that crash-loops (killed and restarted again and again) leaves one valid token',
    { timeout: 90_000 },
    async () => {
      group = new ProcessGroup();
      const redis = await new RedisProcess(group).start();
      const sim = await new SimProcess(group, {
        phoneSystem: 'yeastar-p-series',
        tokenLimit: 8,
      }).start();
      const env = { ...process.env, ACME_API_KEY: sim.key, ACME_API_SECRET: sim.secret };
      const relays = await Promise.all(
        [0, 1].map(() =>
          new RelayProcess(group!, {
            tenant: sim.tenant,
            serviceUrl: sim.baseUrl,
            phoneSystem: 'yeastar-p-series',
            redisUrl: redis.url,
            upstreamLeaseMs: LEASE_MS,
            gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
            env,
          }).start(),
        ),
      );
      const valid = async () =>
        (await sim.control<{ stats: Record<string, number> }>('GET', 'stats')).stats;
      const holder = async (withinMs: number) => {
        const started = Date.now();
        for (;;) {
          const now = await Promise.all(relays.map((r) => upstreamState(r, sim.tenant)));
          const connected = [0, 1].filter((i) => now[i] === 'connected');
          if (connected.length === 1) return connected[0]!;
          if (Date.now() - started > withinMs) throw new Error(`no single holder: ${now.join()}`);
          await sleep(100);
        }
      };
      const counts: number[] = [];
      for (let kill = 0; kill < 4; kill++) {
        const h = await holder(4 * LEASE_MS);
        counts.push((await valid()).tokensValid!);
        relays[h]!.proc.signal('SIGKILL');
        await relays[h]!.proc.exit;
        await relays[h]!.start(); // the restart policy brings it back
      }
      await holder(4 * LEASE_MS);
      const stats = await valid();
      counts.push(stats.tokensValid!);
      console.log(
        `gateway lease, crash loop: valid tokens before each of 4 SIGKILLs of the holder and after the last takeover ${counts.join(', ')}; peak ${stats.tokensValidPeak}; get_token ${stats.getToken}, del_token ${stats.delToken}`,
      );
      expect(counts).toEqual([1, 1, 1, 1, 1]);
      expect(stats.tokensValidPeak).toBeLessThanOrEqual(2);
    },
  );
});
