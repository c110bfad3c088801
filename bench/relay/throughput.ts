/**
 * Part 1 of `npm run bench:relay`: throughput and latency per case and backend, and the idle-clients
 * memory case (bench/relay.ts says what each case is).
 */
import http from 'node:http';
import { relayClientPath } from '../../src-shared/relay/relay-protocol.ts';
import { signBody } from '../../src-sim/webhook-signature.ts';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { startRedis, startTokenService } from '../../rigs/relay/helpers.ts';
import { spawnRelay } from '../../rigs/relay/relay-process.ts';
import { postRaw } from '../../rigs/relay/attacks.ts';
import {
  CONCURRENCY,
  SECRET,
  TOKENS,
  connectClients,
  pct,
  procStats,
  relayStart,
  round,
  sleep,
  loadAverage,
  relayDescribed,
} from './common.ts';

export interface CaseSpec {
  name: string;
  clients: number;
  /** Extensions the events are spread over; 1 = every event to every client. */
  extensions: number;
  /** Closed loop: this many webhooks, CONCURRENCY at a time. Open loop: this many at `rate`/s. */
  webhooks: number;
  rate?: number;
}

export const CASES: CaseSpec[] = [
  { name: 'targeted', clients: 1000, extensions: 100, webhooks: 3000 },
  { name: 'broadcast-100', clients: 100, extensions: 1, webhooks: 6000 },
  { name: 'broadcast-1000', clients: 1000, extensions: 1, webhooks: 800 },
  { name: 'open-loop', clients: 1000, extensions: 1, webhooks: 500, rate: 50 },
];

/**
 * BENCH_HEAP_SNAPSHOTS=1 with BENCH_RELAY_NODE_ARGS="--heapsnapshot-signal=SIGUSR2
 * --diagnostic-dir=<dir>": a heap snapshot of the relay with its clients connected and another
 * after the webhooks (for finding where memory goes; the timings of such a run are not figures).
 */
export async function heapSnapshot(pid: number): Promise<void> {
  if (!process.env.BENCH_HEAP_SNAPSHOTS) return;
  process.kill(pid, 'SIGUSR2');
  // Writing blocks the relay; its /metrics answers again when the snapshot is written.
  await sleep(15_000);
}

/** p50 and p99 of a Prometheus histogram, as the upper bound of the bucket they fall in. */
export function histogramQuantiles(metrics: string, name: string): { p50: string; p99: string } {
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

export interface CaseResult {
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

export interface HeapFigures {
  total: number;
  used: number;
  external: number;
}

/** The relay's heap figures from its /metrics (prom-client's default Node metrics), MiB. */
export function heapOf(metrics: string): HeapFigures {
  const mib = (name: string) =>
    round(Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / 2 ** 20);
  return {
    total: mib('nodejs_heap_size_total_bytes'),
    used: mib('nodejs_heap_size_used_bytes'),
    external: mib('nodejs_external_memory_bytes'),
  };
}

export async function runCase(spec: CaseSpec, backend: 'memory' | 'redis'): Promise<CaseResult> {
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

export interface IdleResult {
  backend: string;
  clients: number;
  connected: number;
  connectSec: number;
  relayMemoryMiB: { idle: number; withClients: number; peak: number };
}

/** The relay's memory with `count` connected, idle clients (each said hello and is live). */
export async function idleCase(count: number, backend: 'memory' | 'redis'): Promise<IdleResult> {
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

/** The throughput table, per-client memory and the idle case, as printed. */
export function throughputLines(
  results: readonly CaseResult[],
  idle: readonly IdleResult[],
): string[] {
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
  return lines;
}
