/**
 * `npm run bench:relay`: figures for the webhook relay (docs/relay-protocol.md, src-relay/README.md).
 *
 * Part 1, throughput and latency, the in-memory and the Redis backends side by side. The relay runs
 * as its own process (`node dist-relay/screenpop-relay.cjs`, the bundle as deployed, built first;
 * BENCH_RELAY_FROM=sources runs src-relay/cli.ts instead; Redis with AOF and fsync always);
 * client WebSockets are connected from this process (a lean load generator, ws-load-client.ts);
 * signed webhooks are posted over keep-alive connections. Cases:
 * - targeted: 1,000 clients, each event addressed to one of 100 extensions (K = 10 receipts each),
 *   32 posters in a closed loop;
 * - broadcast-100 / broadcast-1000: every webhook to every client (the load of a comparison with
 *   smee.io), 32 posters in a closed loop;
 * - open-loop: 1,000 clients, every webhook to every client, webhooks at a fixed 50/s whatever the
 *   answers (so latency is not hidden by a loop that slows down with the relay);
 * - idle (BENCH_IDLE_CLIENTS=10000 to run it): the relay's memory with that many connected idle
 *   clients.
 * Reported per case: webhooks accepted per second; latency as the client sees it (from the webhook
 * leaving the poster to the frame's arrival in the client: p50, p99, max); the relay's own
 * `relay_delivery_lag_ms` histogram read from /metrics (p50/p99 bucket bounds) beside it; relay
 * CPU and write syscalls (/proc/<pid>/io `syscw`) per receipt; control frames per receipt; relay
 * memory (VmRSS idle / with clients / after, VmHWM peak) and V8's heap (total, used) and external
 * memory from its /metrics.
 *
 * Connect cost (BENCH_ONLY=connect, or BENCH_CONNECT_ROUNDS=n beside the rest): 1,000 clients
 * (BENCH_CONNECT_CLIENTS) connecting to one relay, rounds interleaved: every token new (one check
 * at the service each), the same tokens again (the relay's cached answers, src-relay/auth.ts), and
 * bench/floor-server.ts (a bare server with no check), with the load average beside each figure.
 *
 * Part 2, the gap each strategy leaves when the direct stream drops (simulator, in process): hot
 * standby (relay attached all along) against switch-on-failure (relay started when the direct
 * source leaves `connected`), for a clean close and for a half-open stall.
 *
 * Bounded: fixed counts and time-outs; everything it starts it stops. Prints a table and JSON.
 * Latency over the floor (BENCH_ONLY=floor, issue 24 item 4): BENCH_FLOOR_CLIENTS (1,000) clients
 * in BENCH_FLOOR_PROCESSES (8) load processes (load-worker.ts), BENCH_FLOOR_WEBHOOKS (500) webhooks
 * at BENCH_FLOOR_RATE (50)/s, every webhook to every client, BENCH_FLOOR_ROUNDS (2) interleaved
 * rounds of bench/floor-server.ts (a bare server writing frames as the relay does), the relay on
 * memory and on Redis, and smee.io when BENCH_SMEE_DIR names a checkout of it (smee-server.ts);
 * BENCH_FLOOR_TARGETS=floor,memory picks some. Each row gives the CPU of every process (poster, load
 * processes, server) so that a saturated generator or machine shows, and each server's resident
 * memory (idle, with the clients, after; KiB per client): the relay's beside smee.io's.
 *
 * BENCH_ONLY=throughput|gap|connect|floor runs one part; BENCH_CASES=broadcast-100,open-loop picks cases.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src-shared/clock.ts';
import { ServiceClient } from '../src-shared/api/service-client.ts';
import { TokenManager } from '../src-main/core/api/token-manager.ts';
import { EventPipeline } from '../src-main/core/events/pipeline.ts';
import { WebSocketEventSource } from '../src-main/core/events/ws-source.ts';
import { relayClientPath } from '../src-shared/relay-protocol.ts';
import { relayFilterFor } from '../src-main/core/relay-client/filter.ts';
import { RelayEventSource } from '../src-main/core/relay-client/relay-source.ts';
import { silentLogger } from '../src-shared/log.ts';
import { startRelay } from '../src-relay/server.ts';
import { defaultConfig } from '../src-relay/config.ts';
import { MemoryStore } from '../src-relay/store/memory-store.ts';
import { signBody } from '../src-relay/signature.ts';
import { startSimulator } from '../src-sim/index.ts';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { startRedis, startTokenService } from '../rigs/relay/helpers.ts';
import { spawnRelay } from '../rigs/relay/relay-process.ts';
import { postRaw } from '../rigs/relay/attacks.ts';
import { loadClient } from './ws-load-client.ts';
import { smeeUnavailable, spawnSmee } from './smee-server.ts';
import { monotonicMs } from './monotonic.ts';
import { directTransport } from '../rigs/direct-transport.ts';

const SECRET = 'bench-webhook-secret-0123456789';
/** Each client has a token of its own, as each desktop does (the relay caps sessions per token). */
const tokenOf = (i: number) => `bench-client-token-${i}`;
const TOKENS = { has: (t: string) => t.startsWith('bench-client-token-') };
const CONCURRENCY = 32;
/**
 * The Node options the relay is deployed with (test/relay/deploy.test.ts keeps them one);
 * BENCH_RELAY_NODE_ARGS replaces them ('' for none).
 */
const RELAY_NODE_ARGS = '--max-semi-space-size=4';
const relayNodeArgs = () =>
  (process.env.BENCH_RELAY_NODE_ARGS ?? RELAY_NODE_ARGS).split(' ').filter(Boolean);
/** BENCH_RELAY_FROM=sources runs the TypeScript sources (`npm run relay:dev`); default: the bundle. */
const RELAY_FROM = process.env.BENCH_RELAY_FROM === 'sources' ? 'sources' : 'built';
/**
 * BENCH_RELAY_CHECKOUT=<dir>: run the relay of another checkout (its dist-relay/, built there, or
 * its sources), e.g. an older commit's for a before/after in one sitting.
 */
const RELAY_CHECKOUT = process.env.BENCH_RELAY_CHECKOUT || undefined;
/** How every relay of this run is started: its Node options, and the bundle or the sources. */
const relayStart = () => ({
  nodeArgs: relayNodeArgs(),
  sources: RELAY_FROM === 'sources',
  ...(RELAY_CHECKOUT && { cwd: RELAY_CHECKOUT }),
});
/** Which relay this run measures, for the output's first lines. */
const relayDescribed = () =>
  `${RELAY_FROM === 'built' ? 'built (dist-relay/)' : 'from the sources'}${RELAY_CHECKOUT ? ` of ${RELAY_CHECKOUT}` : ''}, node ${relayNodeArgs().join(' ') || '(no options)'}`;
/** BENCH_BACKENDS=memory (or redis) runs one backend; the default runs both. */
const BACKENDS = (['memory', 'redis'] as const).filter(
  (b) => !process.env.BENCH_BACKENDS || process.env.BENCH_BACKENDS.split(',').includes(b),
);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pct = (sorted: ArrayLike<number>, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

interface CaseSpec {
  name: string;
  clients: number;
  /** Extensions the events are spread over; 1 = every event to every client. */
  extensions: number;
  /** Closed loop: this many webhooks, CONCURRENCY at a time. Open loop: this many at `rate`/s. */
  webhooks: number;
  rate?: number;
}

const CASES: CaseSpec[] = [
  { name: 'targeted', clients: 1000, extensions: 100, webhooks: 3000 },
  { name: 'broadcast-100', clients: 100, extensions: 1, webhooks: 6000 },
  { name: 'broadcast-1000', clients: 1000, extensions: 1, webhooks: 800 },
  { name: 'open-loop', clients: 1000, extensions: 1, webhooks: 500, rate: 50 },
];

function procStats(pid: number): {
  rssMiB: number;
  hwmMiB: number;
  cpuMs: number;
  writeSyscalls: number;
} {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100/s on Linux).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return {
    rssMiB: round(kb('VmRSS') / 1024),
    hwmMiB: round(kb('VmHWM') / 1024),
    cpuMs: ticks * 10,
    writeSyscalls: Number(/syscw:\s+(\d+)/.exec(io)?.[1] ?? NaN),
  };
}

/**
 * BENCH_HEAP_SNAPSHOTS=1 with BENCH_RELAY_NODE_ARGS="--heapsnapshot-signal=SIGUSR2
 * --diagnostic-dir=<dir>": a heap snapshot of the relay with its clients connected and another
 * after the webhooks (for finding where memory goes; the timings of such a run are not figures).
 */
async function heapSnapshot(pid: number): Promise<void> {
  if (!process.env.BENCH_HEAP_SNAPSHOTS) return;
  process.kill(pid, 'SIGUSR2');
  // Writing blocks the relay; its /metrics answers again when the snapshot is written.
  await sleep(15_000);
}

/** p50 and p99 of a Prometheus histogram, as the upper bound of the bucket they fall in. */
function histogramQuantiles(metrics: string, name: string): { p50: string; p99: string } {
  const buckets: [string, number][] = [];
  for (const line of metrics.split('\n')) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`).exec(line);
    if (m) buckets.push([m[1]!, Number(m[2])]);
  }
  const total = buckets.at(-1)?.[1] ?? 0;
  const at = (q: number) =>
    total === 0 ? '-' : `<=${buckets.find(([, n]) => n >= q * total)?.[0] ?? '?'}`;
  return { p50: at(0.5), p99: at(0.99) };
}

interface CaseResult {
  case: string;
  backend: string;
  clients: number;
  receiptsPerWebhook: number;
  webhooks: number;
  accepted: number;
  webhooksPerSec: number;
  /** Open loop: the rate asked for. */
  rate: number | null;
  receipts: number;
  expectedReceipts: number;
  /** As the client sees it: from the webhook leaving the poster to the frame's arrival. */
  latencyMs: { p50: number; p99: number; max: number };
  /** The relay's relay_delivery_lag_ms histogram, for comparison. */
  relayLagMetric: { p50: string; p99: string };
  relayCpuUsPerReceipt: number;
  writeSyscallsPerReceipt: number;
  controlFramesPerReceipt: number;
  connectSec: number;
  relayMemoryMiB: { idle: number; withClients: number; after: number; peak: number };
  /** V8's heap (total reserved, used) and memory outside it (external, array buffers), from /metrics. */
  relayHeapMiB: { withClients: HeapFigures; after: HeapFigures };
  /** (RSS with clients - RSS idle) / clients, KiB. */
  relayKiBPerClient: number;
}

interface HeapFigures {
  total: number;
  used: number;
  external: number;
}

/** The relay's heap figures from its /metrics (prom-client's default Node metrics), MiB. */
function heapOf(metrics: string): HeapFigures {
  const mib = (name: string) =>
    round(Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / 2 ** 20);
  return {
    total: mib('nodejs_heap_size_total_bytes'),
    used: mib('nodejs_heap_size_used_bytes'),
    external: mib('nodejs_external_memory_bytes'),
  };
}

async function runCase(spec: CaseSpec, backend: 'memory' | 'redis'): Promise<CaseResult> {
  const service = await startTokenService(TOKENS);
  const redis = backend === 'redis' ? await startRedis() : undefined;
  const relay = await spawnRelay({
    env: {
      RELAY_LOG_LEVEL: 'warn',
      RELAY_TENANT_ACME_SECRETS: SECRET,
      RELAY_TENANT_ACME_BASE_URL: service.baseUrl,
      ...(redis ? { RELAY_REDIS_URL: redis.url } : { RELAY_STORAGE: 'memory' }),
    },
    ...relayStart(),
  }).catch(async (err: unknown) => {
    // Leave no redis-server behind (a child process outlives this one).
    await redis?.stop();
    await service.close();
    throw err;
  });
  const clients: { close(): void }[] = [];
  try {
    const pid = relay.pid;
    const idle = procStats(pid);
    const sentAt = new Float64Array(spec.webhooks).fill(NaN);
    const latencies = new Float64Array(spec.webhooks * Math.ceil(spec.clients / spec.extensions));
    let receipts = 0;
    let controls = 0;
    const wsUrl = relay.url.replace(/^http/, 'ws') + relayClientPath('acme');
    const t0 = performance.now();
    await connectClients(wsUrl, spec.clients, clients, (i) => ({
      extension: 100 + (i % spec.extensions),
      onControl: () => controls++,
      onEvent: (n, at) => {
        if (receipts < latencies.length) latencies[receipts] = at - sentAt[n]!;
        receipts++;
      },
    }));
    if (clients.length < spec.clients) throw new Error('not every client connected');
    const connectSec = (performance.now() - t0) / 1000;
    const withClients = procStats(pid);
    const heapWithClients = heapOf(await (await fetch(relay.url + '/metrics')).text());
    await heapSnapshot(pid);
    controls = 0;

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const url = relay.url + '/webhook/acme';
    const post = (i: number) => {
      // The load client reads the number in the event_id from the bytes (no parse).
      const body = `{"event_id":"${i}","event":30011,"timestamp":${Date.now()},"tenant":"acme","data":{"call_id":"c${i}","from":"+14155550123","to":"${100 + (i % spec.extensions)}","state":"ringing"}}`;
      sentAt[i] = performance.now();
      return postRaw(url, body, signBody(SECRET, body), agent);
    };
    const before = procStats(pid);
    let accepted = 0;
    const start = performance.now();
    if (spec.rate) {
      const answers: Promise<number>[] = [];
      for (let i = 0; i < spec.webhooks; i++) {
        const wait = start + (i * 1000) / spec.rate - performance.now();
        if (wait > 0) await sleep(wait);
        answers.push(post(i));
      }
      accepted = (await Promise.all(answers)).filter((s) => s === 200).length;
    } else {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < spec.webhooks) if ((await post(next++)) === 200) accepted++;
        }),
      );
    }
    const elapsed = (performance.now() - start) / 1000;
    const perWebhook = spec.clients / spec.extensions;
    const expected = accepted * perWebhook;
    const deadline = Date.now() + 30_000;
    while (receipts < expected && Date.now() < deadline) await sleep(20);
    const after = procStats(pid);
    agent.destroy();
    await heapSnapshot(pid);
    const metrics = await (await fetch(relay.url + '/metrics')).text();
    const seen = latencies.slice(0, Math.min(receipts, latencies.length)).sort();
    return {
      case: spec.name,
      backend,
      clients: spec.clients,
      receiptsPerWebhook: perWebhook,
      webhooks: spec.webhooks,
      accepted,
      webhooksPerSec: Math.round(accepted / elapsed),
      rate: spec.rate ?? null,
      receipts,
      expectedReceipts: expected,
      latencyMs: {
        p50: round(pct(seen, 50), 2),
        p99: round(pct(seen, 99), 2),
        max: round(seen.at(-1) ?? NaN, 2),
      },
      relayLagMetric: histogramQuantiles(metrics, 'relay_delivery_lag_ms'),
      relayCpuUsPerReceipt: round(((after.cpuMs - before.cpuMs) * 1000) / Math.max(1, receipts), 2),
      writeSyscallsPerReceipt: round(
        (after.writeSyscalls - before.writeSyscalls) / Math.max(1, receipts),
        3,
      ),
      controlFramesPerReceipt: round(controls / Math.max(1, receipts), 3),
      connectSec: round(connectSec, 2),
      relayMemoryMiB: {
        idle: idle.rssMiB,
        withClients: withClients.rssMiB,
        after: after.rssMiB,
        peak: after.hwmMiB,
      },
      relayHeapMiB: { withClients: heapWithClients, after: heapOf(metrics) },
      relayKiBPerClient: round(((withClients.rssMiB - idle.rssMiB) * 1024) / spec.clients),
    };
  } finally {
    for (const c of clients) c.close();
    await relay.stop();
    await redis?.stop();
    await service.close();
  }
}

/**
 * Connects `count` load clients, 100 at a time, each subscribed to one extension; the ones that
 * connected are pushed to `into` (so they are closed whatever happens).
 */
async function connectClients(
  wsUrl: string,
  count: number,
  into: { close(): void }[],
  each: (i: number) => {
    extension: number;
    /** Default: tokenOf(i). */
    token?: string;
    localAddress?: string;
    onControl(): void;
    onEvent(n: number, at: number): void;
  },
): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, (_, j) => {
        const { extension, token, ...rest } = each(i + j);
        return loadClient({
          url: wsUrl,
          token: token ?? tokenOf(i + j),
          hello: {
            type: 'hello',
            v: 1,
            filter: { extensions: [String(extension)], dids: [], events: [] },
            cursor: null,
          },
          ...rest,
        }).catch(() => null);
      }),
    );
    for (const c of batch) if (c) into.push(c);
  }
}

interface IdleResult {
  backend: string;
  clients: number;
  connected: number;
  connectSec: number;
  relayMemoryMiB: { idle: number; withClients: number; peak: number };
}

/** The relay's memory with `count` connected, idle clients (each said hello and is live). */
async function idleCase(count: number, backend: 'memory' | 'redis'): Promise<IdleResult> {
  const service = await startTokenService(TOKENS);
  const redis = backend === 'redis' ? await startRedis() : undefined;
  // Sessions from one address are capped by default; raise the cap for this measurement.
  const relay = await spawnRelay({
    config: {
      tenants: { acme: { baseUrl: service.baseUrl, secrets: [SECRET] } },
      ...(redis ? { storage: { kind: 'redis', url: redis.url } } : {}),
      clients: { maxSessionsPerAddress: count + 100 },
    },
    env: { RELAY_LOG_LEVEL: 'warn' },
    ...relayStart(),
  });
  const clients: { close(): void }[] = [];
  try {
    const idle = procStats(relay.pid);
    const wsUrl = relay.url.replace(/^http/, 'ws') + relayClientPath('acme');
    const t0 = performance.now();
    await connectClients(wsUrl, count, clients, (i) => ({
      extension: 100 + (i % 1000),
      // Spread the sources over 127.0.0.0/8 so no one address holds too many ports.
      localAddress: `127.0.${1 + (i % 200)}.1`,
      onControl: () => {},
      onEvent: () => {},
    }));
    const connected = clients.length;
    const connectSec = (performance.now() - t0) / 1000;
    await sleep(2000);
    const withClients = procStats(relay.pid);
    return {
      backend,
      clients: count,
      connected,
      connectSec: round(connectSec, 2),
      relayMemoryMiB: {
        idle: idle.rssMiB,
        withClients: withClients.rssMiB,
        peak: withClients.hwmMiB,
      },
    };
  } finally {
    for (const c of clients) c.close();
    await relay.stop();
    await redis?.stop();
    await service.close();
  }
}

interface ConnectRow {
  round: number;
  /** relay-cold: every token new to the relay (one check at the service each); relay-warm: the
   * same tokens again within the answer cache's lifetime; floor: bench/floor-server.ts. */
  variant: 'relay-cold' | 'relay-warm' | 'floor';
  clients: number;
  connected: number;
  seconds: number;
  serviceChecks: number;
  load: string;
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Starts bench/floor-server.ts as a child process; resolves with its URL and a stop function. */
export async function spawnFloor(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('floor-server.ts', import.meta.url))],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /floor listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Connect cost (issue 24 item 5): `count` clients connecting (100 at a time) to one relay process,
 * rounds interleaved: every token new (the relay asks the service for each), the same tokens again
 * (answers cached: no call), and the floor server (no check at all), the load average beside each.
 */
async function connectCase(count: number, rounds: number): Promise<ConnectRow[]> {
  const service = await startTokenService(TOKENS);
  const relay = await spawnRelay({
    env: {
      RELAY_LOG_LEVEL: 'warn',
      RELAY_STORAGE: 'memory',
      RELAY_TENANT_ACME_SECRETS: SECRET,
      RELAY_TENANT_ACME_BASE_URL: service.baseUrl,
    },
    ...relayStart(),
  });
  const floor = await spawnFloor();
  const rows: ConnectRow[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const runs: [ConnectRow['variant'], string][] = [
        ['relay-cold', relay.url],
        ['relay-warm', relay.url],
        ['floor', floor.url],
      ];
      for (const [variant, base] of round % 2 ? runs : [runs[2]!, runs[0]!, runs[1]!]) {
        const clients: { close(): void }[] = [];
        const calls = service.calls();
        const load = loadAverage();
        const t0 = performance.now();
        await connectClients(
          base.replace(/^http/, 'ws') + relayClientPath('acme'),
          count,
          clients,
          (i) => ({
            extension: 100 + (i % 100),
            token: `bench-client-token-r${round}-${i}`,
            onControl: () => {},
            onEvent: () => {},
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        rows.push({
          round,
          variant,
          clients: count,
          connected: clients.length,
          seconds: round3(seconds),
          serviceChecks: service.calls() - calls,
          load,
        });
        for (const c of clients) c.close();
        // Let the relay release the sessions (the per-token and per-address caps) before the next run.
        await sleep(1500);
      }
    }
  } finally {
    await floor.stop();
    await relay.stop();
    await service.close();
  }
  return rows;
}

const round3 = (n: number) => round(n, 3);

interface FloorRow {
  round: number;
  /** floor: bench/floor-server.ts; memory / redis: the relay with that backend; smee: smee.io. */
  target: FloorTarget;
  clients: number;
  processes: number;
  webhooks: number;
  rate: number;
  receipts: number;
  expectedReceipts: number;
  /** From each webhook's due time to the frame's arrival in a client (ms). */
  latencyMs: { p50: number; p99: number; max: number };
  /** From the moment the poster actually sent the webhook (its lateness taken out), the same (ms). */
  fromSendMs: { p50: number; p99: number; max: number };
  /** How late the poster sent webhooks against their due times (ms): the generator's own lag. */
  postLateMs: { p99: number; max: number };
  /** CPU of the poster (this process) over the posting, % of one core. */
  posterCpuPct: number;
  /** Per load process: CPU (% of one core) and event-loop utilization (0-1), start to last receipt. */
  workers: { cpuPct: number; elu: number }[];
  /** The server under test over the same span: CPU (% of one core) and write syscalls per receipt. */
  server: { cpuPct: number; writesPerReceipt: number };
  /**
   * The server's resident memory (VmRSS, MiB): started, before any client; with every client
   * connected (a second after the burst); after the last receipt. And (with clients - idle) /
   * clients in KiB: the same measure for the relay and smee.io, in the same run.
   */
  memoryMiB: { idle: number; withClients: number; after: number; kibPerClient: number };
  load: string;
}

type FloorTarget = 'floor' | 'memory' | 'redis' | 'smee';

/**
 * Latency under a fixed rate, over the floor (issue 24 item 4): `clients` clients spread over
 * `processes` load-generator processes (load-worker.ts), every webhook to every client at `rate`/s,
 * latency from each webhook's due time; the floor server, the relay on memory and on Redis, and
 * smee.io (when BENCH_SMEE_DIR names a checkout, smee-server.ts) in turn, rounds interleaved (the
 * order reversed every other round), the load average and the CPU of every process beside each.
 */
async function floorCases(
  clients: number,
  processes: number,
  webhooks: number,
  rate: number,
  rounds: number,
  smeeDir: string | undefined,
): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  const pick = process.env.BENCH_FLOOR_TARGETS?.split(',');
  const order = (['floor', 'memory', 'redis', 'smee'] as const).filter(
    (t) => (t !== 'smee' || smeeDir) && (!pick || pick.includes(t)),
  );
  for (let round = 1; round <= rounds; round++)
    for (const target of round % 2 ? order : [...order].reverse())
      rows.push(await floorRun(target, round, clients, processes, webhooks, rate, smeeDir));
  return rows;
}

async function floorRun(
  target: FloorTarget,
  roundNo: number,
  clients: number,
  processes: number,
  webhooks: number,
  rate: number,
  smeeDir: string | undefined,
): Promise<FloorRow> {
  const isRelay = target === 'memory' || target === 'redis';
  const service = isRelay ? await startTokenService(TOKENS) : undefined;
  const redis = target === 'redis' ? await startRedis() : undefined;
  const stops: (() => Promise<unknown>)[] = [];
  const workers: ChildProcess[] = [];
  try {
    let server: { url: string; pid: number };
    if (target === 'floor') {
      server = await spawnFloor();
      stops.push(() => (server as Awaited<ReturnType<typeof spawnFloor>>).stop());
    } else if (target === 'smee') {
      const smee = await spawnSmee(smeeDir!);
      stops.push(() => smee.stop());
      server = smee;
    } else {
      const relay = await spawnRelay({
        env: {
          RELAY_LOG_LEVEL: 'warn',
          RELAY_TENANT_ACME_SECRETS: SECRET,
          RELAY_TENANT_ACME_BASE_URL: service!.baseUrl,
          ...(redis ? { RELAY_REDIS_URL: redis.url } : { RELAY_STORAGE: 'memory' }),
        },
        ...relayStart(),
      });
      stops.push(() => relay.stop());
      server = relay;
    }
    const idle = procStats(server.pid);
    // smee.io: one channel, its SSE stream for every client, webhooks posted to the channel.
    const streamUrl =
      target === 'smee'
        ? `${server.url}/bench-channel`
        : server.url.replace(/^http/, 'ws') + relayClientPath('acme');
    const postUrl =
      target === 'smee' ? `${server.url}/bench-channel` : `${server.url}/webhook/acme`;
    const hello = {
      type: 'hello',
      v: 1,
      filter: { extensions: ['100'], dids: [], events: [] },
      cursor: null,
    };
    const per = Math.ceil(clients / processes);
    const answer = (w: ChildProcess, key: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const on = (m: Record<string, unknown>) => {
          if (key in m) {
            w.off('message', on);
            resolve(m);
          }
        };
        w.on('message', on);
        w.once('exit', () => reject(new Error('a load worker exited')));
      });
    for (let p = 0; p < processes; p++)
      workers.push(
        fork(fileURLToPath(new URL('load-worker.ts', import.meta.url)), {
          serialization: 'advanced',
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        }),
      );
    const connected = await Promise.all(
      workers.map((w, p) => {
        const tokens = Array.from(
          { length: Math.max(0, Math.min(per, clients - p * per)) },
          (_, j) => tokenOf(p * per + j),
        );
        const done = answer(w, 'connected');
        w.send({
          connect: { kind: target === 'smee' ? 'sse' : 'ws', url: streamUrl, hello, tokens },
        });
        return done.then((m) => m.connected as number);
      }),
    );
    const total = connected.reduce((a, b) => a + b, 0);
    if (total < clients) throw new Error(`${target}: ${total} of ${clients} clients connected`);
    // Let the connect burst settle (the relay's first GC, smee.io's log lines) before the clock starts.
    await sleep(1000);
    const load = loadAverage();
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const atMs = monotonicMs() + 200;
    for (const w of workers) w.send({ start: { atMs, rate, webhooks } });
    const server0 = procStats(server.pid);
    const wall0 = performance.now();
    const poster0 = process.cpuUsage();
    const late = new Float64Array(webhooks);
    const answers: Promise<number>[] = [];
    for (let i = 0; i < webhooks; i++) {
      const dueAt = atMs + (i * 1000) / rate;
      // A timer can fire a millisecond early (libuv counts from the loop's cached time): never send early.
      for (let wait = dueAt - monotonicMs(); wait > 0; wait = dueAt - monotonicMs())
        await sleep(wait);
      late[i] = monotonicMs() - dueAt;
      const body = `{"event_id":"${i}","event":30011,"timestamp":${Date.now()},"tenant":"acme","data":{"call_id":"c${i}","from":"+14155550123","to":"100","state":"ringing"}}`;
      answers.push(postRaw(postUrl, body, signBody(SECRET, body), agent));
    }
    const posterCpu = process.cpuUsage(poster0);
    const postingMs = performance.now() - wall0;
    const accepted = (await Promise.all(answers)).filter((st) => st === 200).length;
    agent.destroy();
    const expected = accepted * clients;
    let reports: Record<string, unknown>[] = [];
    let got: Float64Array[] = [];
    let server1 = server0;
    let wall1 = wall0;
    const deadline = Date.now() + 30_000;
    for (;;) {
      server1 = procStats(server.pid);
      wall1 = performance.now();
      reports = await Promise.all(
        workers.map((w) => {
          const r = answer(w, 'latencies');
          w.send({ report: true });
          return r;
        }),
      );
      got = reports.map((r) => r.latencies as Float64Array);
      if (got.reduce((a, l) => a + l.length, 0) >= expected || Date.now() > deadline) break;
      await sleep(50);
    }
    const all = new Float64Array(got.reduce((a, l) => a + l.length, 0));
    const fromSend = new Float64Array(all.length);
    let at = 0;
    for (const [w, l] of got.entries()) {
      const ns = reports[w]!.events as Uint32Array;
      all.set(l, at);
      for (let i = 0; i < l.length; i++) fromSend[at + i] = l[i]! - late[ns[i]!]!;
      at += l.length;
    }
    all.sort();
    fromSend.sort();
    late.sort();
    return {
      round: roundNo,
      target,
      clients,
      processes,
      webhooks,
      rate,
      receipts: all.length,
      expectedReceipts: expected,
      latencyMs: {
        p50: round2(pct(all, 50)),
        p99: round2(pct(all, 99)),
        max: round2(all.at(-1) ?? NaN),
      },
      fromSendMs: {
        p50: round2(pct(fromSend, 50)),
        p99: round2(pct(fromSend, 99)),
        max: round2(fromSend.at(-1) ?? NaN),
      },
      postLateMs: { p99: round2(pct(late, 99)), max: round2(late.at(-1) ?? NaN) },
      posterCpuPct: round((100 * (posterCpu.user + posterCpu.system)) / 1000 / postingMs),
      workers: reports.map((r) => ({
        cpuPct: round((100 * (r.cpuMs as number)) / (r.spanMs as number)),
        elu: round2(r.elu as number),
      })),
      server: {
        cpuPct: round((100 * (server1.cpuMs - server0.cpuMs)) / (wall1 - wall0)),
        writesPerReceipt: round2(
          (server1.writeSyscalls - server0.writeSyscalls) / Math.max(1, all.length),
        ),
      },
      memoryMiB: {
        idle: idle.rssMiB,
        withClients: server0.rssMiB,
        after: server1.rssMiB,
        kibPerClient: round(((server0.rssMiB - idle.rssMiB) * 1024) / clients),
      },
      load,
    };
  } finally {
    for (const w of workers) if (w.connected) w.disconnect();
    for (const stop of stops) await stop();
    await redis?.stop();
    await service?.close();
  }
}

const round2 = (n: number) => round(n, 2);

interface GapResult {
  strategy: 'hot-standby' | 'switch-on-failure' | 'switch-on-failure+time-cursor';
  fault: 'close' | 'stall';
  ringsAfterFault: number;
  popped: number;
  lost: number;
  delayMs: { p50: number; max: number };
}

const USER = { extensions: ['101'], dids: [], defaultRegion: 'US' };
const DIRECT_HEARTBEAT_MS = 2000;

/**
 * One run: direct source + relay source into one pipeline; rings every 50 ms; the direct stream
 * fails after 1 s; rings go on for 2.5 heartbeat intervals more. The delay of a ring is the time
 * from the simulator's ring() to its pop; a ring not popped 3 s after the last ring is lost.
 */
async function gapRun(
  strategy: GapResult['strategy'],
  fault: GapResult['fault'],
): Promise<GapResult> {
  const sim = await startSimulator();
  const config = {
    ...defaultConfig({ [sim.tenant]: { baseUrl: sim.baseUrl, secrets: [SECRET] } }),
    port: 0,
  };
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
  sim.addWebhook({ url: relay.webhookUrl(sim.tenant), secret: SECRET });
  const net = directTransport();
  const tokens = new TokenManager({
    client: new ServiceClient({ baseUrl: sim.baseUrl, clock: systemClock, fetch: net.fetch }),
    credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    clock: systemClock,
  });
  const pipeline = new EventPipeline({ clock: systemClock, user: USER });
  const direct = new WebSocketEventSource({
    baseUrl: sim.baseUrl,
    tokens,
    topics: [30011],
    clock: systemClock,
    heartbeatMs: DIRECT_HEARTBEAT_MS,
    backoff: { baseMs: 200, capMs: 1000 },
    createSocket: net.createSocket,
  });
  let faultAt = 0;
  const relaySource = new RelayEventSource({
    relayUrl: relay.url,
    tenant: sim.tenant,
    tokens,
    filter: relayFilterFor(USER),
    clock: systemClock,
    backoff: { baseMs: 200, capMs: 1000 },
    createSocket: net.createSocket,
    // Switch-on-failure has no relay cursor of its own; the variant with a time cursor asks the
    // relay for everything since shortly before the failure (a cursor is `<ms>-<seq>`).
    ...(strategy === 'switch-on-failure+time-cursor'
      ? {
          cursorStore: {
            load: async () => `${Math.max(0, faultAt - 2 * DIRECT_HEARTBEAT_MS - 1000)}-0`,
            save: async () => {},
          },
        }
      : {}),
  });
  pipeline.attach(direct);
  pipeline.attach(relaySource);
  const popAt = new Map<string, number>();
  pipeline.onPop((p) => {
    if (!popAt.has(p.callId)) popAt.set(p.callId, performance.now());
  });
  direct.start();
  if (strategy === 'hot-standby') relaySource.start();
  else
    direct.onStatus((s) => {
      if (faultAt && s.state !== 'connected') relaySource.start();
    });
  const until = async (check: () => boolean, ms: number) => {
    const end = Date.now() + ms;
    while (!check() && Date.now() < end) await sleep(10);
  };
  await until(() => direct.status().state === 'connected', 5000);
  if (strategy === 'hot-standby') await sleep(300);

  const ringAt = new Map<string, number>();
  const afterFault: string[] = [];
  const total = Math.ceil((1000 + 2.5 * DIRECT_HEARTBEAT_MS) / 50);
  for (let i = 0; i < total; i++) {
    if (i === 20) {
      faultAt = Date.now();
      if (fault === 'close') sim.closeAllSockets(1001);
      else sim.stallSockets();
    }
    const callId = sim.ring({ from: `+1415555${1000 + i}`, to: '101' });
    ringAt.set(callId, performance.now());
    if (i >= 20) afterFault.push(callId);
    await sleep(50);
  }
  await until(() => afterFault.every((c) => popAt.has(c)), 3000);
  const delays = afterFault
    .filter((c) => popAt.has(c))
    .map((c) => popAt.get(c)! - ringAt.get(c)!)
    .sort((a, b) => a - b);
  await direct.stop();
  await relaySource.stop();
  tokens.stop();
  await relay.close();
  await store.close();
  await sim.close();
  return {
    strategy,
    fault,
    ringsAfterFault: afterFault.length,
    popped: delays.length,
    lost: afterFault.length - delays.length,
    delayMs: { p50: round(pct(delays, 50)), max: round(delays.at(-1) ?? NaN) },
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  // BENCH_ONLY=throughput|gap|connect|floor runs one part; the default runs throughput and gap.
  const only = process.env.BENCH_ONLY;
  const pick = process.env.BENCH_CASES?.split(',');
  const results: CaseResult[] = [];
  if (only !== 'gap' && only !== 'connect' && only !== 'floor')
    for (const spec of CASES.filter((c) => !pick || pick.includes(c.name)))
      for (const b of BACKENDS) results.push(await runCase(spec, b));
  const idleCount = Number(process.env.BENCH_IDLE_CLIENTS ?? 0);
  const idle: IdleResult[] = [];
  if (idleCount > 0 && !only) for (const b of BACKENDS) idle.push(await idleCase(idleCount, b));
  const connect: ConnectRow[] = [];
  if (only === 'connect' || process.env.BENCH_CONNECT_ROUNDS)
    connect.push(
      ...(await connectCase(
        Number(process.env.BENCH_CONNECT_CLIENTS ?? 1000),
        Number(process.env.BENCH_CONNECT_ROUNDS ?? 3),
      )),
    );
  const floors: FloorRow[] = [];
  if (only === 'floor')
    floors.push(
      ...(await floorCases(
        Number(process.env.BENCH_FLOOR_CLIENTS ?? 1000),
        Number(process.env.BENCH_FLOOR_PROCESSES ?? 8),
        Number(process.env.BENCH_FLOOR_WEBHOOKS ?? 500),
        Number(process.env.BENCH_FLOOR_RATE ?? 50),
        Number(process.env.BENCH_FLOOR_ROUNDS ?? 2),
        process.env.BENCH_SMEE_DIR,
      )),
    );
  const gaps: GapResult[] = [];
  if (only !== 'throughput' && only !== 'connect' && only !== 'floor')
    for (const fault of ['close', 'stall'] as const)
      for (const strategy of [
        'hot-standby',
        'switch-on-failure',
        'switch-on-failure+time-cursor',
      ] as const)
        gaps.push(await gapRun(strategy, fault));

  const lines: string[] = [];
  const load = loadAverage();
  lines.push(
    `relay throughput (${new Date().toISOString()}, load ${load}); closed loop = ${CONCURRENCY} posters, latency as the client sees it; relay run ${relayDescribed()}`,
  );
  lines.push(
    'case            backend  clients  recv/wh  webhooks/s  receipts/expected  client p50/p99/max (ms)  relay lag metric p50/p99  cpu us/rcpt  writes/rcpt  ctl/rcpt  RSS idle/+clients/after/peak (MiB)',
  );
  for (const r of results)
    lines.push(
      [
        r.case.padEnd(15),
        r.backend.padEnd(7),
        String(r.clients).padStart(7),
        String(r.receiptsPerWebhook).padStart(7),
        (r.rate ? `${r.webhooksPerSec} (at ${r.rate})` : String(r.webhooksPerSec)).padStart(10),
        `${r.receipts}/${r.expectedReceipts}`.padStart(17),
        `${r.latencyMs.p50} / ${r.latencyMs.p99} / ${r.latencyMs.max}`.padStart(23),
        `${r.relayLagMetric.p50} / ${r.relayLagMetric.p99}`.padStart(24),
        String(r.relayCpuUsPerReceipt).padStart(11),
        String(r.writeSyscallsPerReceipt).padStart(11),
        String(r.controlFramesPerReceipt).padStart(8),
        `${r.relayMemoryMiB.idle} / ${r.relayMemoryMiB.withClients} / ${r.relayMemoryMiB.after} / ${r.relayMemoryMiB.peak}`.padStart(
          34,
        ),
      ].join('  '),
    );
  for (const r of results)
    lines.push(
      `  ${r.case} ${r.backend}: RSS per client ${r.relayKiBPerClient} KiB ((with clients - idle) / clients); V8 heap total/used, external (MiB): with clients ${r.relayHeapMiB.withClients.total}/${r.relayHeapMiB.withClients.used}, ${r.relayHeapMiB.withClients.external}; after ${r.relayHeapMiB.after.total}/${r.relayHeapMiB.after.used}, ${r.relayHeapMiB.after.external}`,
    );
  for (const r of idle)
    lines.push(
      `idle clients: ${r.backend} ${r.connected}/${r.clients} connected in ${r.connectSec} s; relay RSS idle ${r.relayMemoryMiB.idle} MiB, with clients ${r.relayMemoryMiB.withClients} MiB (peak ${r.relayMemoryMiB.peak})`,
    );
  if (connect.length) {
    lines.push('');
    lines.push(
      'connect cost: relay-cold = every token new (one check at the service each, answered by this process), relay-warm = the same tokens again (cached answers), floor = bench/floor-server.ts (no check)',
    );
    lines.push('round  variant     connected  seconds  service checks  load (1/5/15 min)');
    for (const c of connect)
      lines.push(
        `${String(c.round).padStart(5)}  ${c.variant.padEnd(10)}  ${`${c.connected}/${c.clients}`.padStart(9)}  ${String(c.seconds).padStart(7)}  ${String(c.serviceChecks).padStart(14)}  ${c.load}`,
      );
  }
  if (floors.length) {
    const f0 = floors[0]!;
    lines.push('');
    lines.push(
      `latency over the floor: ${f0.clients} clients in ${f0.processes} load processes, every webhook to every client, ${f0.webhooks} webhooks at ${f0.rate}/s; latency from each webhook's due time (floor = bench/floor-server.ts, writing as the relay does)`,
    );
    const smeeWhy = smeeUnavailable(process.env.BENCH_SMEE_DIR);
    if (smeeWhy) lines.push(`smee.io not run: ${smeeWhy}`);
    lines.push(
      'round  target  receipts/expected  from due p50 / p99 / max (ms)  from send p50 / p99  above floor (due) p50 / p99  (send) p50 / p99  post late p99/max  poster cpu  load procs cpu % (elu)  server cpu  writes/rcpt  load (1/5/15 min)',
    );
    const floorOf = (f: FloorRow) =>
      floors.find((x) => x.round === f.round && x.target === 'floor');
    const diff = (a: number, b: number | undefined) => (b === undefined ? NaN : round2(a - b));
    for (const f of floors) {
      const floor = f.target === 'floor' ? undefined : floorOf(f);
      const pair = (a: number, b: number) => (floor ? `${a} / ${b}` : '-');
      lines.push(
        [
          String(f.round).padStart(5),
          f.target.padEnd(6),
          `${f.receipts}/${f.expectedReceipts}`.padStart(17),
          `${f.latencyMs.p50} / ${f.latencyMs.p99} / ${f.latencyMs.max}`.padStart(29),
          `${f.fromSendMs.p50} / ${f.fromSendMs.p99}`.padStart(19),
          pair(
            diff(f.latencyMs.p50, floor?.latencyMs.p50),
            diff(f.latencyMs.p99, floor?.latencyMs.p99),
          ).padStart(27),
          pair(
            diff(f.fromSendMs.p50, floor?.fromSendMs.p50),
            diff(f.fromSendMs.p99, floor?.fromSendMs.p99),
          ).padStart(16),
          `${f.postLateMs.p99} / ${f.postLateMs.max}`.padStart(17),
          `${f.posterCpuPct} %`.padStart(10),
          f.workers
            .map((w) => `${w.cpuPct}(${w.elu})`)
            .join(' ')
            .padEnd(22),
          `${f.server.cpuPct} %`.padStart(10),
          String(f.server.writesPerReceipt).padStart(11),
          f.load,
        ].join('  '),
      );
    }
    lines.push(
      `memory of each server in those runs (VmRSS, MiB; the relay ${relayDescribed()}): round  target  idle / with clients / after  KiB per client`,
    );
    for (const f of floors)
      lines.push(
        `${String(f.round).padStart(5)}  ${f.target.padEnd(6)}  ${`${f.memoryMiB.idle} / ${f.memoryMiB.withClients} / ${f.memoryMiB.after}`.padStart(27)}  ${String(f.memoryMiB.kibPerClient).padStart(14)}`,
      );
    // Per target over the rounds: each round compared with the floor of the same round.
    const spread = (xs: number[]) => {
      const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
      return v.length ? `${v[0]} / ${v[Math.floor((v.length - 1) / 2)]} / ${v.at(-1)}` : '-';
    };
    lines.push(
      'over the rounds (min / median / max, ms): target  p50 from due  p99 from due  p99 above floor (due)  p99 above floor (send)',
    );
    for (const target of new Set(floors.map((f) => f.target))) {
      const rows = floors.filter((f) => f.target === target);
      lines.push(
        `  ${target.padEnd(6)}  ${spread(rows.map((f) => f.latencyMs.p50))}  ${spread(rows.map((f) => f.latencyMs.p99))}  ${
          target === 'floor'
            ? '-'
            : `${spread(rows.map((f) => diff(f.latencyMs.p99, floorOf(f)?.latencyMs.p99)))}  ${spread(
                rows.map((f) => diff(f.fromSendMs.p99, floorOf(f)?.fromSendMs.p99)),
              )}`
        }`,
      );
    }
  }
  lines.push('');
  lines.push(
    `failover gap: rings every 50 ms, direct heartbeat ${DIRECT_HEARTBEAT_MS} ms (dead after 2 silent intervals)`,
  );
  lines.push('fault  strategy                        rings  popped  lost  delay p50 / max (ms)');
  for (const g of gaps)
    lines.push(
      `${g.fault.padEnd(6)} ${g.strategy.padEnd(31)} ${String(g.ringsAfterFault).padStart(5)}  ${String(g.popped).padStart(6)}  ${String(g.lost).padStart(4)}  ${`${g.delayMs.p50} / ${g.delayMs.max}`.padStart(20)}`,
    );
  lines.push('', `total ${round((performance.now() - started) / 1000)} s`);
  process.stdout.write(
    lines.join('\n') +
      '\n\n' +
      JSON.stringify({ results, idle, connect, floors, gaps }, null, 2) +
      '\n',
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:relay failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
