/**
 * `node bench/relay-memory.ts` (Node 24: `npm exec -- node bench/relay-memory.ts`): does a gateway
 * relay's memory settle, or grow with the calls it has seen? (The 20-minute Sentinel soak's relay instance 1 went from 115 to 152 MB RSS.) One relay
 * process as the soak starts it (`node dist-relay/screenpop-relay.cjs --config ...`: gateway mode
 * on a Yeastar P-Series tenant, the Redis store), with the inspector on 127.0.0.1 (`--inspect`, port
 * chosen by the kernel) so that this process can force a full collection and read
 * `process.memoryUsage()` inside it; a redis-server of its own (AOF, fsync always, as the soak's);
 * and, in this process, the simulator as the PBX (member-style call reports, its seeded traffic at
 * BENCH_RATE reports a second over 400 extensions), which both streams the reports to the lease
 * holder and posts them as signed webhooks to the relay, as in the soak (each report arrives twice).
 *
 * Beside the calls, what the soak's faults do to a relay, compressed:
 * - desktops (BENCH_DESKTOPS, each its own access token and extension): one of them closes and
 *   reconnects from its cursor every 500 ms;
 * - the upstream's socket closed by the PBX every 20 s (close 1001) and its tokens living 120 s (a
 *   rotation of the stream every minute);
 * - a takeover every BENCH_TAKEOVER_S (default 30) s: the lease key overwritten by another owner for
 *   4 s (as another instance taking it), so this relay loses its term, stands by and then starts a
 *   new one (new upstream, new tokens, the earlier term's revoked).
 *
 * Every 10,000 calls (BENCH_STEP), a full collection in the relay (HeapProfiler.collectGarbage
 * twice) and its `process.memoryUsage()`; /proc's RSS and anonymous RSS. Prints a table and one JSON
 * line. BENCH_CALLS: calls in all (default 60,000). BENCH_SNAPSHOTS=<dir>: a heap snapshot after the
 * first and the last step, and the object kinds that grew most between them (count and bytes), with
 * the path that holds a few of the newest of the first kinds (to name the table). No assertion:
 * figures only. BENCH_RELAY_CHECKOUT=<dir> runs another checkout's dist-relay/ (a before/after).
 * Taking a snapshot costs the relay native memory it keeps (its RSS jumps by ~90 MiB and stays):
 * compare RSS across runs without BENCH_SNAPSHOTS; the heap and ArrayBuffer figures are unaffected.
 * At a rate the relay cannot store as fast as it comes (a loaded machine), the lease holder's
 * frames queue in memory, one after the other (gateway/upstream.ts): the heap then grows with
 * the queue, not with the calls; the `upstream` counts per row say whether its stream keeps up.
 */
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import { startSimulator } from '../src-sim/index.ts';
import { spawnRelay, rssMiB } from '../rigs/relay/relay-process.ts';
import { startRedis, TestClient } from '../rigs/relay/helpers.ts';
import { procStats, round, sleep } from './relay/common.ts';

const TOTAL_CALLS = Number(process.env.BENCH_CALLS ?? 60_000);
const STEP = Number(process.env.BENCH_STEP ?? 10_000);
const RATE = Number(process.env.BENCH_RATE ?? 400);
const DESKTOPS = Number(process.env.BENCH_DESKTOPS ?? 20);
const TAKEOVER_S = Number(process.env.BENCH_TAKEOVER_S ?? 30);
const SNAPSHOTS = process.env.BENCH_SNAPSHOTS || undefined;
const CHECKOUT = process.env.BENCH_RELAY_CHECKOUT || undefined;
const WEBHOOK_SECRET = 'whsec-bench-memory-0123456789abcd'; // 32 characters, as a P-Series makes
const LEASE_MS = 3_000;

const MiB = (b: number) => round(b / 1048576, 1);

/** A Chrome DevTools Protocol session on the relay's inspector. */
class Inspector {
  private readonly ws: WebSocket;
  private next = 1;
  private readonly waiting = new Map<number, (r: { result?: unknown; error?: unknown }) => void>();
  private readonly handlers = new Map<string, (params: Record<string, unknown>) => void>();

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as {
        id?: number;
        method?: string;
        params?: Record<string, unknown>;
        result?: unknown;
        error?: unknown;
      };
      if (m.id !== undefined) this.waiting.get(m.id)?.(m);
      else if (m.method) this.handlers.get(m.method)?.(m.params ?? {});
    });
  }

  static async open(url: string): Promise<Inspector> {
    const ws = new WebSocket(url, { maxPayload: 1 << 30 });
    await once(ws, 'open');
    return new Inspector(ws);
  }

  on(method: string, handler: (params: Record<string, unknown>) => void): void {
    this.handlers.set(method, handler);
  }

  send<T = unknown>(method: string, params: object = {}): Promise<T> {
    const id = this.next++;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) =>
      this.waiting.set(id, (r) => {
        this.waiting.delete(id);
        if (r.error) reject(new Error(`${method}: ${JSON.stringify(r.error)}`));
        else resolve(r.result as T);
      }),
    );
  }

  async memory(): Promise<NodeJS.MemoryUsage> {
    await this.send('HeapProfiler.collectGarbage');
    await this.send('HeapProfiler.collectGarbage');
    const r = await this.send<{ result: { value: string } }>('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    return JSON.parse(r.result.value) as NodeJS.MemoryUsage;
  }

  async snapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    this.on('HeapProfiler.addHeapSnapshotChunk', (p) => out.write(p.chunk as string));
    await this.send('HeapProfiler.collectGarbage');
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    out.end();
    await once(out, 'finish');
  }

  close(): void {
    this.ws.close();
  }
}

// ---- heap snapshots: object kinds counted, and who holds the newest of a kind ----

interface Snapshot {
  nodes: number[];
  edges: number[];
  strings: string[];
  nodeFields: number;
  edgeFields: number;
  types: string[];
  edgeTypes: string[];
  f: { type: number; name: number; id: number; size: number; edges: number };
  e: { type: number; name: number; to: number };
}

function readSnapshot(file: string): Snapshot {
  const s = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: {
      meta: {
        node_fields: string[];
        node_types: [string[]];
        edge_fields: string[];
        edge_types: [string[]];
      };
    };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const m = s.snapshot.meta;
  return {
    nodes: s.nodes,
    edges: s.edges,
    strings: s.strings,
    nodeFields: m.node_fields.length,
    edgeFields: m.edge_fields.length,
    types: m.node_types[0],
    edgeTypes: m.edge_types[0],
    f: {
      type: m.node_fields.indexOf('type'),
      name: m.node_fields.indexOf('name'),
      id: m.node_fields.indexOf('id'),
      size: m.node_fields.indexOf('self_size'),
      edges: m.node_fields.indexOf('edge_count'),
    },
    e: {
      type: m.edge_fields.indexOf('type'),
      name: m.edge_fields.indexOf('name_or_index'),
      to: m.edge_fields.indexOf('to_node'),
    },
  };
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

function kindOf(s: Snapshot, i: number): string {
  const type = s.types[s.nodes[i + s.f.type]!]!;
  if (STRING_TYPES.has(type)) return '(string)';
  return `${type}:${s.strings[s.nodes[i + s.f.name]!]!.slice(0, 60)}`;
}

function kinds(s: Snapshot): Map<string, { count: number; bytes: number }> {
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < s.nodes.length; i += s.nodeFields) {
    const k = kindOf(s, i);
    const v = out.get(k) ?? { count: 0, bytes: 0 };
    v.count++;
    v.bytes += s.nodes[i + s.f.size]!;
    out.set(k, v);
  }
  return out;
}

/** For a few of the newest nodes of `kind`, the chain of holders up to 8 steps (first strong retainer each). */
function holders(s: Snapshot, kind: string, samples = 3): string[] {
  const count = s.nodes.length / s.nodeFields;
  const retainer = new Int32Array(count).fill(-1);
  const via = new Int32Array(count).fill(-1);
  let edge = 0;
  for (let n = 0; n < count; n++) {
    const i = n * s.nodeFields;
    const fromType = s.types[s.nodes[i + s.f.type]!];
    const edgesOf = s.nodes[i + s.f.edges]!;
    for (let k = 0; k < edgesOf; k++, edge += s.edgeFields) {
      const type = s.edgeTypes[s.edges[edge + s.e.type]!];
      if (type === 'weak' || type === 'shortcut') continue;
      const to = s.edges[edge + s.e.to]! / s.nodeFields;
      // Prefer a holder that is an object or closure over V8's own (hidden, code, synthetic).
      const better =
        retainer[to] === -1 ||
        (fromType !== 'hidden' &&
          fromType !== 'code' &&
          fromType !== 'synthetic' &&
          ['hidden', 'code', 'synthetic'].includes(
            s.types[s.nodes[retainer[to]! * s.nodeFields + s.f.type]!]!,
          ));
      if (better) {
        retainer[to] = n;
        via[to] = edge;
      }
    }
  }
  const ofKind: number[] = [];
  for (let n = 0; n < count; n++) if (kindOf(s, n * s.nodeFields) === kind) ofKind.push(n);
  ofKind.sort((a, b) => s.nodes[b * s.nodeFields + s.f.id]! - s.nodes[a * s.nodeFields + s.f.id]!);
  return ofKind.slice(0, samples).map((start) => {
    const path: string[] = [kind];
    let n = start;
    for (let step = 0; step < 8 && retainer[n] !== -1; step++) {
      const e = via[n]!;
      const edgeType = s.edgeTypes[s.edges[e + s.e.type]!];
      const name =
        edgeType === 'element' || edgeType === 'hidden'
          ? `[${s.edges[e + s.e.name]}]`
          : String(s.strings[s.edges[e + s.e.name]!]).slice(0, 40);
      n = retainer[n]!;
      path.push(`<-${name}- ${kindOf(s, n * s.nodeFields)}`);
    }
    return path.join(' ');
  });
}

function diffSnapshots(first: string, last: string): object {
  const a = kinds(readSnapshot(first));
  const lastSnap = readSnapshot(last);
  const b = kinds(lastSnap);
  const grew = [...b]
    .map(([kind, v]) => {
      const before = a.get(kind) ?? { count: 0, bytes: 0 };
      return { kind, count: v.count - before.count, bytes: v.bytes - before.bytes, now: v.count };
    })
    .filter((g) => g.bytes > 0 || g.count > 0)
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, 15);
  const held = grew
    .filter((g) => g.kind !== '(string)' && g.count > 100)
    .slice(0, 3)
    .map((g) => ({ kind: g.kind, paths: holders(lastSnap, g.kind) }));
  return { grew, held };
}

// ---- the run ----

async function accessToken(baseUrl: string, key: string, secret: string): Promise<string> {
  const res = await fetch(`${baseUrl}/openapi/v1.0/get_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'bench' },
    body: JSON.stringify({ username: key, password: secret }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`get_token: ${JSON.stringify(body)}`);
  return body.access_token;
}

interface Row {
  calls: number;
  seconds: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  rssMiB: number;
  anonMiB: number;
  takeovers: number;
  reconnects: number;
  refused: number;
  /** Events the desktops received (a replay after a reconnect counts again). */
  delivered: number;
  webhooks: number;
  /** The relay's stream frames so far by result (relay_upstream_events_total). */
  upstream: Record<string, number>;
  cpuS: number;
}

const sim = await startSimulator({
  phoneSystem: 'yeastar-p-series',
  reportStyle: 'member',
  extensions: 400,
  seed: 40544,
  accessTokenLifetimeSec: 120,
  idleTimeoutMs: 60_000,
});
const redis = await startRedis();
const tenant = sim.tenant;
const relay = await spawnRelay({
  nodeArgs: ['--inspect=127.0.0.1:0'],
  ...(CHECKOUT && { cwd: CHECKOUT }),
  env: { BENCH_API_KEY: sim.apiKey.key, BENCH_API_SECRET: sim.apiKey.secret },
  config: {
    host: '127.0.0.1',
    port: 0,
    logLevel: 'warn',
    tenants: {
      [tenant]: {
        baseUrl: sim.baseUrl,
        secrets: [WEBHOOK_SECRET],
        phoneSystem: 'yeastar-p-series',
        gateway: { apiKeyEnv: 'BENCH_API_KEY', secretEnv: 'BENCH_API_SECRET' },
      },
    },
    storage: { kind: 'redis', url: redis.url, upstreamLeaseMs: LEASE_MS },
    shutdownGraceMs: 2_000,
  },
});
const timers: NodeJS.Timeout[] = [];
const desktops: Array<{ ext: string; token: string; client?: TestClient; cursor: string | null }> =
  [];
const thief = new Redis(redis.url);
let inspector: Inspector | undefined;
try {
  const debuggerUrl = /Debugger listening on (ws:\/\/\S+)/.exec(relay.stderr())?.[1];
  if (!debuggerUrl)
    throw new Error(`no inspector address in the relay's output:\n${relay.stderr()}`);
  inspector = await Inspector.open(debuggerUrl);
  sim.addWebhook({ url: `${relay.url}/webhook/${tenant}`, secret: WEBHOOK_SECRET });

  const wsUrl = `${relay.url.replace(/^http/, 'ws')}/v1/stream/${tenant}`;
  for (let i = 0; i < DESKTOPS; i++) {
    const d = {
      ext: String(101 + i),
      token: await accessToken(sim.baseUrl, sim.apiKey.key, sim.apiKey.secret),
      cursor: null as string | null,
    };
    (d as (typeof desktops)[number]).client = await TestClient.connect(wsUrl, d.token, {
      extensions: [d.ext],
    });
    desktops.push(d);
  }

  // Calls: a call counts once its first report is sent.
  const calls = new Set<string>();
  sim.onSent((envelope) => {
    const id = (envelope.data as { call_id?: unknown })?.call_id;
    if (typeof id === 'string') calls.add(id);
  });

  let reconnects = 0;
  /** Reconnects refused (an expired token), each followed by a new token. */
  let refused = 0;
  /** Events the desktops' earlier connections received. */
  let deliveredBefore = 0;
  let next = 0;
  let reconnecting = false;
  timers.push(
    setInterval(() => {
      if (reconnecting) return;
      reconnecting = true;
      const d = desktops[next++ % desktops.length]!;
      void (async () => {
        d.cursor = d.client?.cursor ?? d.cursor;
        deliveredBefore += d.client?.events.length ?? 0;
        await d.client?.close();
        d.client = undefined;
        try {
          d.client = await TestClient.connect(wsUrl, d.token, { extensions: [d.ext] }, d.cursor);
        } catch {
          // Its token expired (they live 120 s here, and the relay's answer for one 5 minutes):
          // signed in again, as a desktop does.
          refused++;
          d.token = await accessToken(sim.baseUrl, sim.apiKey.key, sim.apiKey.secret);
          d.client = await TestClient.connect(wsUrl, d.token, { extensions: [d.ext] }, d.cursor);
        }
        reconnects++;
      })()
        .catch((err: unknown) => process.stderr.write(`desktop: ${(err as Error).message}\n`))
        .finally(() => (reconnecting = false));
    }, 500),
  );
  timers.push(setInterval(() => sim.closeAllSockets(1001), 20_000));
  let takeovers = 0;
  const leaseKey = `relay:{${tenant}}:upstream-lease`;
  if (TAKEOVER_S > 0)
    timers.push(
      setInterval(() => {
        takeovers++;
        void thief.set(leaseKey, `bench-other-instance:${takeovers}`, 'PX', 4_000);
      }, TAKEOVER_S * 1000),
    );

  const upstreamFrames = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(`${relay.url}/metrics`)).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(
      /^relay_upstream_events_total\{[^}]*result="([a-z-]+)"\} (\d+)/gm,
    ))
      out[m[1]!] = Number(m[2]);
    return out;
  };
  sim.startTraffic({ ratePerSec: RATE });
  const started = Date.now();
  const rows: Row[] = [];
  const measure = async (n: number): Promise<Row> => {
    const m = await inspector!.memory();
    const p = procStats(relay.pid);
    const row: Row = {
      calls: n,
      seconds: Math.round((Date.now() - started) / 1000),
      heapUsedMiB: MiB(m.heapUsed),
      heapTotalMiB: MiB(m.heapTotal),
      externalMiB: MiB(m.external),
      arrayBuffersMiB: MiB(m.arrayBuffers),
      rssMiB: p.rssMiB,
      anonMiB: p.anonMiB,
      takeovers,
      reconnects,
      refused,
      delivered: desktops.reduce((n, d) => n + (d.client?.events.length ?? 0), deliveredBefore),
      webhooks: sim.stats().webhookDelivered,
      upstream: await upstreamFrames(),
      cpuS: round(p.cpuMs / 1000, 1),
    };
    rows.push(row);
    process.stderr.write(`${JSON.stringify(row)}\n`);
    return row;
  };
  await measure(0);
  if (SNAPSHOTS) mkdirSync(SNAPSHOTS, { recursive: true });
  for (let target = STEP; target <= TOTAL_CALLS; target += STEP) {
    while (calls.size < target) {
      if (!Number.isFinite(rssMiB(relay.pid))) throw new Error('the relay died');
      await sleep(200);
    }
    await measure(target);
    if (SNAPSHOTS && (target === STEP || target + STEP > TOTAL_CALLS))
      await inspector.snapshot(join(SNAPSHOTS, `relay-${target}.heapsnapshot`));
  }
  sim.stopTraffic();
  const stats = sim.stats();
  const metrics = await (await fetch(`${relay.url}/metrics`)).text();
  const counter = (name: string) =>
    metrics
      .split('\n')
      .filter((l) => l.startsWith(name))
      .map((l) => `${l.slice(name.length)}`.trim())
      .join(' ');
  const diff =
    SNAPSHOTS && rows.length > 2
      ? diffSnapshots(
          join(SNAPSHOTS, `relay-${STEP}.heapsnapshot`),
          join(SNAPSHOTS, `relay-${rows[rows.length - 1]!.calls}.heapsnapshot`),
        )
      : undefined;

  const first = rows[1] ?? rows[0]!;
  const last = rows[rows.length - 1]!;
  const per10k = (a: number, b: number) =>
    round(((b - a) / Math.max(1, last.calls - first.calls)) * 10_000, 2);
  console.log(
    `Relay memory, gateway mode, Yeastar P-Series member reports (stream + webhooks), Redis; ${RATE} reports/s, ${DESKTOPS} desktops reconnecting, takeover every ${TAKEOVER_S} s; relay ${CHECKOUT ?? 'this checkout'}`,
  );
  console.log(
    '| Calls | s | Heap used MiB | Heap total MiB | External MiB | ArrayBuffers MiB | RSS MiB | Anon RSS MiB | Takeovers | Desktop reconnects |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.calls} | ${r.seconds} | ${r.heapUsedMiB} | ${r.heapTotalMiB} | ${r.externalMiB} | ${r.arrayBuffersMiB} | ${r.rssMiB} | ${r.anonMiB} | ${r.takeovers} | ${r.reconnects} |`,
    );
  console.log(
    `Per 10k calls from ${first.calls} to ${last.calls}: heap used ${per10k(first.heapUsedMiB, last.heapUsedMiB)} MiB, ArrayBuffers ${per10k(first.arrayBuffersMiB, last.arrayBuffersMiB)} MiB, RSS ${per10k(first.rssMiB, last.rssMiB)} MiB`,
  );
  if (diff) console.log(JSON.stringify(diff, null, 1));
  const summary = {
    bench: 'relay-memory',
    rate: RATE,
    desktops: DESKTOPS,
    takeoverEveryS: TAKEOVER_S,
    checkout: CHECKOUT ?? null,
    rows,
    heapUsedMiBPer10kCalls: per10k(first.heapUsedMiB, last.heapUsedMiB),
    arrayBuffersMiBPer10kCalls: per10k(first.arrayBuffersMiB, last.arrayBuffersMiB),
    rssMiBPer10kCalls: per10k(first.rssMiB, last.rssMiB),
    sim: {
      eventsSent: stats.eventsSent,
      webhookDelivered: stats.webhookDelivered,
      webhookFailedAttempts: stats.webhookFailedAttempts,
      getToken: stats.getToken,
      delToken: stats.delToken,
      tokensValid: stats.tokensValid,
    },
    relay: {
      stored: counter('relay_events_stored_total'),
      upstream: counter('relay_upstream_events_total'),
      duplicates: counter('relay_webhooks_duplicate_total'),
    },
    ...(diff && { snapshotDiff: diff }),
  };
  console.log(JSON.stringify(summary));
  if (SNAPSHOTS) writeFileSync(join(SNAPSHOTS, 'summary.json'), JSON.stringify(summary, null, 1));
} finally {
  for (const t of timers) clearInterval(t);
  inspector?.close();
  for (const d of desktops) await d.client?.close();
  thief.disconnect();
  await relay.stop();
  await sim.close();
  await redis.stop();
}
