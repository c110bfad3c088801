/**
 * `npm run soak -- --minutes N [--seed S] [--phone-system standard|yeastar-p-series]
 * [--report-style snapshot|member|mixed]`: the shipped processes for N minutes, all speaking that
 * phone system's wire (for Yeastar P-Series, the simulator's call reports in that style:
 * src-sim/README.md), under faults chosen at random from a seed, and the figures a user would judge
 * them by. Prints, per minute and in total, rings sent / popped / missed / doubled / stale and the
 * resident memory (RSS) of the runner and the relay, as a table and as JSON; exits 1 when a ring
 * was missed, doubled, stale or popped with a caller other than the one that rang, when a call
 * nobody rang popped, when the runner did not recover from a fault, or when the runner died.
 *
 * The processes, all from this checkout and as documented: redis-server (AOF), the simulator
 * (`node src-sim/cli.ts --control`, background traffic, webhooks to the relay), the relay on Redis
 * (`node dist-relay/screenpop-relay.cjs`), and the runner in `auto` mode (`node bin/screenpop-headless.js
 * --relay-url ... --event-source auto`, default heartbeat). A ring to extension 101 goes out every
 * 2-5 s and ends a few seconds later; one fault at a time, then a quiet spell until the runner is
 * back to `connected`. Rings keep going during every fault but two: while the simulator itself is
 * down (nothing can ring) and while the runner is frozen (SIGSTOP: nothing can pop).
 *
 * Faults: server closes 1001/1012; a stalled (half-open) socket; tokens expired mid-stream; 429 and
 * 5xx storms on the token calls; the simulator killed and restarted on its port without its tokens;
 * the runner frozen (SIGSTOP) past the server's idle timeout; the relay killed or stopped and
 * restarted; Redis killed and restarted on its data.
 *
 * `--gateway 2|3` (issue 40 item 5): gateway mode instead, 2 or 3 relays on one Redis, each with
 * the API key and secret, one of them holding the tenant's upstream by a lease
 * (docs/relay-protocol.md 2.4.1); the phone system's webhooks to every instance (one destination URL
 * each, as both phone systems allow: a takeover's gap in the stream is covered by them only if they
 * do not all go to the holder); the runner reads the first only
 * (`--event-source relay`). Faults from outside: the upstream holder killed (SIGKILL) and
 * restarted, the holder frozen (SIGSTOP: a partition from Redis) then resumed, the simulator
 * restarted, tokens refused (5xx on the token calls, tokens expired) then accepted. Each fault's
 * recovery time (until the runner is connected and exactly one instance holds the upstream) is
 * printed and in the JSON (`recoveries`).
 *
 * `--sentinel` (with `--gateway`, issue 40 items 1 and 5): Redis as a Sentinel group instead of one
 * redis-server, shaped as deploy/relay/compose.sentinel.yaml (rigs/relay/sentinel-support.ts: a
 * primary, two replicas, three sentinels, quorum 2, down after 1 s), the relays given the sentinels
 * (`storage.sentinel`) and `minReplicas` 1 (a webhook answered once a replica has it), and one more fault, a
 * third of the faults drawn: the primary the sentinels name killed (SIGKILL), the sentinels' failover,
 * the killed node started again on its port and data (the sentinels make it a replica); recovered
 * once a ring sent after the kill has popped (`failoverMs`: kill to the sentinels naming another
 * primary; `firstPopMs`: kill to that pop). `--fault <text>`: draw only the faults whose name
 * holds the text (for a short check of one fault).
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { ProcessGroup, sleep, until } from '../../rigs/processes.ts';
import {
  RedisProcess,
  RelayProcess,
  SimProcess,
  startAutoMode,
  startRunner,
  type AutoModeRig,
} from './services.ts';
import { RingLedger } from './ledger.ts';
import {
  sentinelAvailable,
  startSentinelGroup,
  type SentinelGroup,
} from '../../rigs/relay/sentinel-support.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string' },
    'phone-system': { type: 'string', default: 'standard' },
    'report-style': { type: 'string' },
    gateway: { type: 'string' },
    sentinel: { type: 'boolean' },
    fault: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const USAGE =
  'Usage: npm run soak -- --minutes <n> [--seed <n>] [--phone-system standard|yeastar-p-series]\n' +
  '                      [--report-style snapshot|member|mixed] (yeastar-p-series only)\n' +
  '                      [--gateway <instances>] (2 or 3 relays in gateway mode on one Redis)\n' +
  '                      [--sentinel] (with --gateway: Redis as a Sentinel group, its primary killed)\n' +
  '                      [--fault <text>] (only the faults whose name holds the text)\n';
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const PHONE_SYSTEMS = ['standard', 'yeastar-p-series'] as const;
const phoneSystem = PHONE_SYSTEMS.find((p) => p === values['phone-system']);
if (!phoneSystem) {
  process.stderr.write(`--phone-system must be standard or yeastar-p-series\n${USAGE}`);
  process.exit(2);
}
const REPORT_STYLES = ['snapshot', 'member', 'mixed'] as const;
const reportStyle = REPORT_STYLES.find((s) => s === values['report-style']);
if (values['report-style'] !== undefined && (!reportStyle || phoneSystem !== 'yeastar-p-series')) {
  process.stderr.write(
    `--report-style must be snapshot, member or mixed, with --phone-system yeastar-p-series\n${USAGE}`,
  );
  process.exit(2);
}
/** The system as the figures name it: `yeastar-p-series/member`. */
const system = reportStyle ? `${phoneSystem}/${reportStyle}` : phoneSystem;
const minutes = Number(values.minutes);
if (!(minutes > 0 && minutes <= 24 * 60)) {
  process.stderr.write('--minutes must be between 0 and 1440\n');
  process.exit(2);
}
const instances = values.gateway === undefined ? 0 : Number(values.gateway);
if (values.gateway !== undefined && !(instances === 2 || instances === 3)) {
  process.stderr.write(`--gateway must be 2 or 3 (relay instances)\n${USAGE}`);
  process.exit(2);
}
const sentinel = values.sentinel === true;
if (sentinel && !instances) {
  process.stderr.write(`--sentinel goes with --gateway\n${USAGE}`);
  process.exit(2);
}
if (sentinel && !sentinelAvailable('npm run soak -- --sentinel')) process.exit(2);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;

/** mulberry32: a small seeded generator, so that one seed gives one sequence of faults. */
function rng(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
// Two streams, so that the faults one seed gives do not depend on how the rings interleave.
const faultRandom = rng(seed);
const ringRandom = rng(seed + 1);
const between = (lo: number, hi: number, random = faultRandom) =>
  lo + Math.floor(random() * (hi - lo + 1));

function rssMb(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/**
 * In gateway mode, `relays` are all the instances (`relay` is the one the runner reads); with
 * `--sentinel`, `sentinel` is the Redis group and there is no single `redis`.
 */
type Rig = Omit<AutoModeRig, 'redis'> & {
  redis?: AutoModeRig['redis'];
  relays?: RelayProcess[];
  sentinel?: SentinelGroup;
};

/** Rings are paused while this is false (simulator down, runner frozen). */
let ringing = true;
const faultsInjected: Array<{
  at: number;
  fault: string;
  recoveryMs?: number;
  /** Gateway mode: from the holder's kill or freeze to another instance holding the upstream. */
  takeoverMs?: number;
  /** Sentinel: from the primary's kill to the sentinels naming another one. */
  failoverMs?: number;
  /** Sentinel: from the primary's kill to the pop of the first ring sent after it. */
  firstPopMs?: number;
}> = [];
/** What the fault running now measured, copied into its `faultsInjected` entry. */
let measured: { takeoverMs?: number; failoverMs?: number; firstPopMs?: number } = {};

/**
 * One fault. `quiet`: the runner may not notice it (Redis behind the relay); every other fault
 * makes it leave `connected` (possibly only after a heartbeat or two), and the next fault waits
 * until it has noticed and recovered, so that there is one fault at a time.
 */
type Fault = { name: string; run: (r: Rig) => Promise<void>; quiet?: boolean };

const FAULTS: Fault[] = [
  {
    name: 'close 1001',
    run: (r) => r.sim.control('POST', 'faults/close', { code: 1001 }).then(() => {}),
  },
  {
    name: 'close 1012',
    run: (r) => r.sim.control('POST', 'faults/close', { code: 1012 }).then(() => {}),
  },
  { name: 'stall', run: (r) => r.sim.control('POST', 'faults/stall').then(() => {}) },
  {
    name: 'tokens expired',
    run: (r) => r.sim.control('POST', 'faults/expire-tokens').then(() => {}),
  },
  {
    name: 'token storm',
    run: async (r) => {
      const status = [429, 500, 502, 503][between(0, 3)]!;
      await r.sim.control('POST', 'faults/fail-http', {
        status,
        count: between(3, 8),
        target: 'api',
        ...(status === 429 ? { retryAfterSec: 1 } : {}),
      });
      await r.sim.control('POST', 'faults/expire-tokens');
    },
  },
  {
    name: 'simulator restarted',
    run: async (r) => {
      ringing = false;
      await r.sim.restart(between(500, 3_000));
      // A new simulator has none of the old one's webhooks: configure it as an admin would.
      await r.sim.control('POST', 'webhooks', {
        url: r.relay.webhookUrl(),
        secret: r.relay.webhookSecret,
      });
      await r.runner.waitForState('connected', 120_000);
      ringing = true;
    },
  },
  {
    name: 'runner frozen past the idle timeout',
    run: async (r) => {
      ringing = false;
      await sleep(5_000); // let the rings already sent pop first
      r.runner.proc.signal('SIGSTOP');
      await sleep(between(62, 75) * 1000);
      r.runner.proc.signal('SIGCONT');
      await r.runner.waitForState('connected', 120_000);
      ringing = true;
    },
  },
  {
    name: 'relay killed and restarted',
    run: async (r) => {
      r.relay.proc.signal(faultRandom() < 0.5 ? 'SIGKILL' : 'SIGTERM');
      await r.relay.proc.exit;
      await sleep(between(1_000, 10_000));
      await r.relay.start();
    },
  },
  {
    name: 'redis killed and restarted',
    quiet: true,
    run: async (r) => {
      await r.redis!.kill();
      await sleep(between(1_000, 10_000));
      await r.redis!.start();
    },
  },
];

// ---- gateway mode (--gateway N): N relays keep one stream to the phone system by a lease ----

/** Each relay's upstream state (/healthz), `down` for one that does not answer. */
async function upstreamStates(r: Rig): Promise<string[]> {
  return Promise.all(
    (r.relays ?? []).map(async (relay) => {
      try {
        const res = await fetch(`${relay.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
        const body = (await res.json()) as { upstream?: Record<string, { state: string }> };
        return body.upstream?.[r.sim.tenant]?.state ?? 'none';
      } catch {
        return 'down';
      }
    }),
  );
}

/**
 * The instances holding the upstream lease: any state but `standby` (or down). The holder's stream
 * may be `reconnecting` for minutes when the phone system lost its tokens: the gateway's sign-in
 * rule (at most 3 get_token in 10 minutes, src-relay/README.md) holds it, by design.
 */
function holders(states: string[]): number[] {
  return states.flatMap((s, i) => (s === 'standby' || s === 'down' || s === 'none' ? [] : [i]));
}

/** The instance holding the stream now (waits up to a minute for one). */
async function holder(r: Rig): Promise<number> {
  for (let waited = 0; waited < 60_000; waited += 200) {
    const connected = holders(await upstreamStates(r));
    if (connected.length === 1) return connected[0]!;
    await sleep(200);
  }
  throw new Error(`no single upstream holder: ${(await upstreamStates(r)).join(', ')}`);
}

/** The soak's recovery of a gateway fault: exactly one instance holds the upstream (not `except`, the one frozen). */
async function oneUpstream(r: Rig, except?: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const states = await upstreamStates(r);
    const connected = holders(states);
    if (connected.length === 1 && connected[0] !== except) return;
    if (Date.now() > deadline)
      throw new Error(`no single upstream holder after 120 s: ${states.join(', ')}`);
    await sleep(200);
  }
}

/**
 * `--sentinel`: the primary the sentinels name killed (SIGKILL), the sentinels' failover, the
 * killed node started again 1-5 s later on its port and data (as its supervisor would; the
 * sentinels make it a replica of the promoted one), then recovered once a ring sent after the kill
 * has popped. Rings go on throughout: the relays' webhooks and the holder's stream write to Redis
 * through the failover.
 */
const redisFailover: Fault = {
  name: 'redis primary killed (Sentinel failover)',
  quiet: true,
  run: async (r) => {
    const group = r.sentinel!;
    const at = Date.now();
    const killed = await group.killCurrentPrimary();
    process.stderr.write(`soak: killed the Redis primary ${killed}\n`);
    for (;;) {
      const now = await group.currentPrimary().catch(() => killed);
      if (now !== killed) {
        measured.failoverMs = Date.now() - at;
        process.stderr.write(`soak: the sentinels name ${now} (${measured.failoverMs} ms)\n`);
        break;
      }
      if (Date.now() - at > 60_000)
        throw new Error(`no failover in 60 s: ${JSON.stringify(await group.state())}`);
      await sleep(100);
    }
    await sleep(between(1_000, 5_000));
    await group.restartKilled();
    // Recovered once a ring sent after the kill has popped (when its pop line came out).
    const sentAfter = () =>
      new Set([...r.ledger.sentTimes()].flatMap(([id, sentAt]) => (sentAt > at ? [id] : [])));
    const firstPop = () => r.runner.pops().find((p) => sentAfter().has(p.call_id as string));
    await r.runner.waitFor(
      () => firstPop() !== undefined,
      'a ring sent after the kill to pop',
      120_000,
    );
    measured.firstPopMs = firstPop()!.at - at;
  },
};

/**
 * The lease holder taken out by `signal` (SIGKILL: dead; SIGSTOP: frozen, as if cut off from Redis
 * and the phone system), until another instance holds the upstream; then `after` brings it back.
 * The runner's own instance: without a load balancer in front of the desktops, nothing can pop
 * while it is out (as while the runner is frozen), so rings pause; those already sent pop first.
 * The webhooks still reach the other instances (startGatewayMode), so a ring in the takeover gap
 * comes in by webhook at once.
 */
async function holderFault(
  r: Rig,
  signal: 'SIGKILL' | 'SIGSTOP',
  after: (relay: RelayProcess) => Promise<void>,
): Promise<void> {
  const i = await holder(r);
  const relay = r.relays![i]!;
  const desktops = i === 0;
  process.stderr.write(
    `soak: the holder is instance ${i + 1}${desktops ? " (the runner's)" : ''}\n`,
  );
  if (desktops) {
    ringing = false;
    await sleep(5_000);
  }
  const signalled = Date.now();
  relay.proc.signal(signal);
  if (signal === 'SIGKILL') await relay.proc.exit;
  await oneUpstream(r, signal === 'SIGSTOP' ? i : undefined);
  measured.takeoverMs = Date.now() - signalled;
  await after(relay);
  if (desktops) await r.runner.waitForState('connected', 120_000);
  ringing = true;
}

/** The phone system's webhooks: one destination URL per relay instance (startGatewayMode). */
async function gatewayWebhooks(r: Pick<Rig, 'sim' | 'relays'>): Promise<void> {
  for (const relay of r.relays ?? [])
    await r.sim.control('POST', 'webhooks', {
      url: relay.webhookUrl(),
      secret: relay.webhookSecret,
    });
}

const GATEWAY_FAULTS: Fault[] = [
  {
    name: 'upstream holder killed (SIGKILL) and restarted',
    quiet: true,
    run: (r) =>
      holderFault(r, 'SIGKILL', async (relay) => {
        await sleep(between(1_000, 5_000));
        await relay.start();
      }),
  },
  {
    name: 'upstream holder cut off from Redis (SIGSTOP, then SIGCONT)',
    quiet: true,
    run: (r) =>
      holderFault(r, 'SIGSTOP', async (relay) => {
        await sleep(between(2_000, 8_000));
        relay.proc.signal('SIGCONT');
      }),
  },
  {
    name: 'simulator restarted',
    quiet: true,
    run: async (r) => {
      ringing = false;
      await r.sim.restart(between(500, 3_000));
      await gatewayWebhooks(r);
      await r.runner.waitForState('connected', 120_000);
      ringing = true;
    },
  },
  {
    name: 'tokens refused, then accepted',
    quiet: true,
    run: async (r) => {
      await r.sim.control('POST', 'faults/fail-http', {
        status: [500, 502, 503][between(0, 2)]!,
        count: between(3, 8),
        target: 'api',
      });
      await r.sim.control('POST', 'faults/expire-tokens');
    },
  },
];

/**
 * redis-server, the simulator (background traffic, webhooks to every instance), `count`
 * relays in gateway mode on that Redis (each with the API key and secret; one keeps the stream),
 * and the runner reading the first instance only (`--event-source relay`): every pop comes
 * through the gateway's stream or the webhooks, never from the runner's own stream.
 */
async function startGatewayMode(
  group: ProcessGroup,
  count: number,
  sentinelGroup?: SentinelGroup,
): Promise<Rig> {
  const redis = sentinelGroup ? undefined : await new RedisProcess(group).start();
  const sim = await new SimProcess(group, {
    traffic: 3,
    exclude: ['101'],
    seed,
    phoneSystem,
    ...(reportStyle && { reportStyle }),
  }).start();
  const env = { ...process.env, SOAK_API_KEY: sim.key, SOAK_API_SECRET: sim.secret };
  const relays = await Promise.all(
    Array.from({ length: count }, () =>
      new RelayProcess(group, {
        tenant: sim.tenant,
        serviceUrl: sim.baseUrl,
        ...(sentinelGroup
          ? {
              sentinel: { name: sentinelGroup.name, nodes: sentinelGroup.sentinels },
              minReplicas: 1,
            }
          : { redisUrl: redis!.url }),
        phoneSystem,
        gateway: { apiKeyEnv: 'SOAK_API_KEY', secretEnv: 'SOAK_API_SECRET' },
        env,
      }).start(),
    ),
  );
  await gatewayWebhooks({ sim, relays });
  const relayUrl = relays[0]!.url.replace(/^http/, 'ws');
  const runner = startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args: ['--relay-url', relayUrl, '--relay-tenant', sim.tenant, '--event-source', 'relay'],
    phoneSystem,
  });
  await runner.waitForState('connected', 60_000);
  const rig: Rig = {
    ...(redis && { redis }),
    ...(sentinelGroup && { sentinel: sentinelGroup }),
    sim,
    relay: relays[0]!,
    relays,
    runner,
    ledger: new RingLedger(runner),
  };
  await oneUpstream(rig);
  return rig;
}

async function main(): Promise<number> {
  const group = new ProcessGroup();
  let sentinelGroup: SentinelGroup | undefined;
  const stopAll = () =>
    void Promise.all([group.cleanup(), sentinelGroup?.stop()]).then(() => process.exit(130));
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  try {
    // As deploy/relay/compose.sentinel.yaml: two replicas, and minReplicas 1 (startGatewayMode).
    if (sentinel) sentinelGroup = await startSentinelGroup({ replicas: 2 });
    const rig: Rig =
      instances > 0
        ? await startGatewayMode(group, instances, sentinelGroup)
        : await startAutoMode(group, {
            seed,
            phoneSystem,
            ...(reportStyle && { reportStyle }),
          });
    const pool = instances > 0 ? GATEWAY_FAULTS : FAULTS;
    const only = (list: Fault[]) =>
      values.fault === undefined ? list : list.filter((f) => f.name.includes(values.fault!));
    const faults = only(pool);
    const failover = only(sentinel ? [redisFailover] : []);
    if (faults.length + failover.length === 0)
      throw new Error(`no fault's name holds "${values.fault}"`);
    /** One fault: with --sentinel, the failover a third of the time (else it would be one in five). */
    const draw = (): Fault =>
      failover.length && (!faults.length || faultRandom() < 1 / 3)
        ? failover[0]!
        : faults[between(0, faults.length - 1)]!;
    const { sim, runner } = rig;
    const started = Date.now();
    const end = started + minutes * 60_000;
    process.stderr.write(
      `soak: seed ${seed}, ${minutes} min, ${system}${instances ? `, gateway x${instances}` : ''}${sentinel ? ', Redis Sentinel' : ''}, runner pid ${runner.proc.pid}\n`,
    );

    // Rings, every 2-5 s, each ended 3-8 s later.
    let stopRinging = false;
    const ringLoop = (async () => {
      while (!stopRinging && runner.proc.running()) {
        if (ringing) {
          const callId = await rig.ledger.ring(sim).catch(() => null);
          if (callId) {
            // Missed (ended while ringing) or answered and ended a few seconds later.
            const missed = ringRandom() < 0.3;
            const ringMs = between(3_000, 8_000, ringRandom);
            setTimeout(() => {
              void sim.setState(callId, missed ? 'ended' : 'answered').catch(() => {});
              if (!missed)
                setTimeout(() => void sim.setState(callId, 'ended').catch(() => {}), 3_000);
            }, ringMs);
          }
        }
        await sleep(between(2_000, 5_000, ringRandom));
      }
    })();

    // RSS once a minute.
    const rss: Array<{ minute: number; runnerMb: number | null; relayMb: number | null }> = [];
    const sampler = setInterval(() => {
      rss.push({
        minute: Math.round((Date.now() - started) / 60_000),
        runnerMb: rssMb(runner.proc.pid),
        relayMb: rssMb(rig.relay.proc.pid),
      });
    }, 60_000);

    // Faults, one at a time, with a quiet spell between; the last minute (a third of a shorter
    // run) is quiet.
    const quietEnd = end - Math.min(60_000, (minutes * 60_000) / 3);
    let recoveryFailures = 0;
    while (Date.now() < quietEnd && runner.proc.running()) {
      await sleep(between(10_000, 25_000));
      if (Date.now() >= quietEnd) break;
      const fault = draw();
      const injected: (typeof faultsInjected)[number] = { at: Date.now(), fault: fault.name };
      faultsInjected.push(injected);
      process.stderr.write(
        `soak: ${((Date.now() - started) / 60_000).toFixed(1)} min: ${fault.name}\n`,
      );
      const mark = runner.lines.length;
      measured = {};
      try {
        await fault.run(rig);
        if (!fault.quiet) await runner.waitForDrop(mark, 120_000);
        await runner.waitForState('connected', 120_000);
        // Gateway mode: recovered once one instance holds the stream again.
        if (instances > 0) await oneUpstream(rig);
        injected.recoveryMs = Date.now() - injected.at;
        Object.assign(injected, measured);
        process.stderr.write(
          `soak: recovered from ${fault.name} in ${injected.recoveryMs} ms${injected.takeoverMs !== undefined ? ` (upstream taken over in ${injected.takeoverMs} ms)` : ''}${injected.failoverMs !== undefined ? ` (failover ${injected.failoverMs} ms, first pop ${injected.firstPopMs} ms after the kill)` : ''}\n`,
        );
      } catch (error) {
        recoveryFailures++;
        Object.assign(injected, measured);
        process.stderr.write(`soak: no recovery from ${fault.name}: ${(error as Error).message}\n`);
        ringing = true;
      }
    }
    await until(
      () => Date.now() >= end || !runner.proc.running(),
      'the end',
      minutes * 60_000 + 60_000,
    );
    stopRinging = true;
    await ringLoop;
    clearInterval(sampler);
    await rig.ledger.settle(undefined, 30_000);
    const running = runner.proc.running();

    const figures = rig.ledger.figures();
    const sentAt = rig.ledger.sentTimes();
    const perMinute = Array.from({ length: Math.ceil(minutes) }, (_, m) => {
      const inMinute = (id: string) => Math.floor((sentAt.get(id)! - started) / 60_000) === m;
      const ids = [...sentAt.keys()].filter(inMinute);
      const sample = rss.find((s) => s.minute === m + 1);
      return {
        minute: m + 1,
        sent: ids.length,
        popped: ids.length - figures.missed.filter(inMinute).length,
        missed: figures.missed.filter(inMinute).length,
        doubled: figures.doubled.filter(inMinute).length,
        stale: figures.stale.filter(inMinute).length,
        wrongCaller: figures.wrongCaller.filter(inMinute).length,
        runnerRssMb: sample?.runnerMb ?? null,
        relayRssMb: sample?.relayMb ?? null,
        faults: faultsInjected
          .filter((f) => Math.floor((f.at - started) / 60_000) === m)
          .map((f) => f.fault),
      };
    });
    const summary = {
      seed,
      minutes,
      phoneSystem,
      ...(reportStyle && { reportStyle }),
      ...(instances > 0 && { gatewayInstances: instances }),
      ...(sentinel && { redis: 'sentinel', redisReplicas: 2, minReplicas: 1 }),
      sent: figures.sent,
      popped: figures.popped,
      missed: figures.missed.length,
      doubled: figures.doubled.length,
      stale: figures.stale.length,
      wrongCaller: figures.wrongCaller.length,
      unexpected: figures.unexpected.length,
      faults: faultsInjected.length,
      recoveries: faultsInjected.map((f) => ({
        fault: f.fault,
        ms: f.recoveryMs ?? null,
        ...(f.takeoverMs !== undefined && { takeoverMs: f.takeoverMs }),
        ...(f.failoverMs !== undefined && { failoverMs: f.failoverMs }),
        ...(f.firstPopMs !== undefined && { firstPopMs: f.firstPopMs }),
      })),
      recoveryFailures,
      runnerRunning: running,
      faultLines: runner.lines.filter((l) => l.type === 'fault').length,
      perMinute,
      details: {
        missed: figures.missed,
        doubled: figures.doubled,
        stale: figures.stale,
        wrongCaller: figures.wrongCaller,
        unexpected: figures.unexpected,
      },
    };
    const table = [
      'min  sent popped missed doubled stale caller  runner MB  relay MB  faults',
      ...perMinute.map(
        (m) =>
          `${String(m.minute).padStart(3)} ${String(m.sent).padStart(5)} ${String(m.popped).padStart(6)} ${String(m.missed).padStart(6)} ${String(m.doubled).padStart(7)} ${String(m.stale).padStart(5)} ${String(m.wrongCaller).padStart(6)} ${String(m.runnerRssMb ?? '-').padStart(10)} ${String(m.relayRssMb ?? '-').padStart(9)}  ${m.faults.join(', ')}`,
      ),
      `all ${String(summary.sent).padStart(5)} ${String(summary.popped).padStart(6)} ${String(summary.missed).padStart(6)} ${String(summary.doubled).padStart(7)} ${String(summary.stale).padStart(5)} ${String(summary.wrongCaller).padStart(6)}   (seed ${seed}; ${system}; ${summary.faults} faults; runner ${running ? 'running' : 'DEAD'})`,
    ];
    process.stdout.write(`${JSON.stringify(summary)}\n\n${table.join('\n')}\n`);
    const ok =
      running &&
      summary.missed === 0 &&
      summary.doubled === 0 &&
      summary.stale === 0 &&
      summary.wrongCaller === 0 &&
      summary.unexpected === 0 &&
      recoveryFailures === 0;
    if (!ok) process.stderr.write(`soak FAILED\n${group.describe()}\n`);
    return ok ? 0 : 1;
  } finally {
    await group.cleanup();
    await sentinelGroup?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
