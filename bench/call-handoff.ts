/**
 * `npm run bench:call-handoff`: what the call handoff (issue 40, src-relay/gateway/call-handoff.ts)
 * costs Redis while nothing happens, and how long a handed-off call takes. A redis-server started
 * here on 127.0.0.1; two relay stores on it, as two instances: the lease holder of BENCH_TENANTS
 * tenants (default 200) with a handoff each, and a standby.
 *
 * - idle: the commands the server executed (INFO commandstats, its own INFO calls left out) over
 *   BENCH_IDLE_MS (default 10 s) while the holder sits idle, per second, by command. The stores'
 *   followers (one XREAD BLOCK of 2 s each, as a relay runs them) are part of it.
 * - latency: BENCH_DIALS (default 100) dials handed from the standby to the holder one after the
 *   other (a random pause of 0-100 ms between two, so they do not fall into step with a poll),
 *   the holder's phone system answering at once: ms from the dial to its answer, p50, p99, max.
 *
 * Prints a table and one JSON line. No assertion: figures only.
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { systemClock } from '../src-shared/process/clock.ts';
import { silentLogger } from '../src-shared/process/log.ts';
import { CallHandoff } from '../src-relay/gateway/call-handoff.ts';
import type { PbxCallAnswer, RelayCallApi } from '../src-relay/calls/call-route.ts';
import { RedisStore } from '../src-relay/store/redis-store.ts';
import { startRedis } from '../rigs/relay/helpers.ts';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 200);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const DIALS = Number(process.env.BENCH_DIALS ?? 100);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function commandCounts(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info('commandstats');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

function pbx(): RelayCallApi {
  let n = 0;
  const ok = async (): Promise<PbxCallAnswer> => ({ ok: true });
  return {
    dial: async () => ({ ok: true, callId: `c${++n}` }),
    transfer: ok,
    hangup: ok,
    attended: ok,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const redis = await startRedis();
const stores: RedisStore[] = [];
const handoffs: CallHandoff[] = [];
try {
  const tenants = Array.from({ length: TENANTS }, (_, i) => `t${i}`);
  const open = async () => {
    const store = new RedisStore({
      url: redis.url,
      tenants,
      clock: systemClock,
      logger: silentLogger,
    });
    await store.open();
    stores.push(store);
    return store;
  };
  const holderStore = await open();
  const standbyStore = await open();
  const handoff = (tenant: string, store: RedisStore, term: () => string | undefined) =>
    new CallHandoff({
      tenant,
      backend: store,
      local: pbx(),
      term,
      extensionsOf: async () => ['101'],
      clock: systemClock,
      logger: silentLogger,
    });
  for (const tenant of tenants) {
    const token = (await holderStore.acquireLease(tenant, 'holder', 10 * 60_000))!;
    const h = handoff(tenant, holderStore, () => token);
    h.start();
    handoffs.push(h);
  }
  const admin = new Redis(redis.url);
  await sleep(1_000);
  const before = await commandCounts(admin);
  const started = performance.now();
  await sleep(IDLE_MS);
  const after = await commandCounts(admin);
  const seconds = (performance.now() - started) / 1000;
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [name, calls] of after) {
    const d = calls - (before.get(name) ?? 0);
    if (d === 0 || name === 'info') continue;
    byCommand[name] = Math.round((d / seconds) * 10) / 10;
    total += d;
  }
  admin.disconnect();

  const standby = handoff(tenants[0]!, standbyStore, () => undefined);
  const times: number[] = [];
  let failed = 0;
  for (let i = 0; i < DIALS; i++) {
    await sleep(Math.random() * 100);
    const t0 = performance.now();
    const answer = await standby.api().dial('101', '+14155550199', 'alice');
    times.push(performance.now() - t0);
    if (!answer.ok) failed++;
  }
  times.sort((a, b) => a - b);
  const ms = (x: number) => Math.round(x * 10) / 10;
  const result = {
    tenants: TENANTS,
    idleSeconds: ms(seconds),
    idleCommandsPerSecond: ms(total / seconds),
    idleByCommandPerSecond: byCommand,
    dials: DIALS,
    failed,
    latencyMs: {
      p50: ms(percentile(times, 50)),
      p99: ms(percentile(times, 99)),
      max: ms(times[times.length - 1]!),
    },
  };
  console.log(`call handoff, ${TENANTS} tenants held by one instance`);
  console.log('| figure | value |');
  console.log('|---|---|');
  console.log(`| idle commands/s (${ms(seconds)} s) | ${result.idleCommandsPerSecond} |`);
  for (const [name, rate] of Object.entries(byCommand)) console.log(`|   ${name}/s | ${rate} |`);
  console.log(`| handed-off dial p50 ms | ${result.latencyMs.p50} |`);
  console.log(`| handed-off dial p99 ms | ${result.latencyMs.p99} |`);
  console.log(`| handed-off dial max ms | ${result.latencyMs.max} |`);
  console.log(`| dials not ok | ${failed} of ${DIALS} |`);
  console.log(JSON.stringify(result));
} finally {
  for (const h of handoffs) h.stop();
  for (const s of stores) await s.close();
  await redis.stop();
}
