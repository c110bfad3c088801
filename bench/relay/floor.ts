/**
 * `npm run bench:relay` latency over the floor (BENCH_ONLY=floor): many clients in load processes,
 * the floor server, the relay on memory and Redis, and smee.io where a checkout is named.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { relayClientPath } from '../../src-shared/relay/relay-protocol.ts';
import { signBody } from '../../src-sim/webhook-signature.ts';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { startRedis, startTokenService } from '../../rigs/relay/helpers.ts';
import { spawnRelay } from '../../rigs/relay/relay-process.ts';
import { startSentinelGroup } from '../../rigs/relay/sentinel-support.ts';
import { postRaw } from '../../rigs/relay/attacks.ts';
import { smeeUnavailable, spawnSmee } from '../smee-server.ts';
import { monotonicMs } from '../monotonic.ts';
import { histogramQuantiles } from './throughput.ts';
import {
  CONCURRENCY,
  SECRET,
  TOKENS,
  loadAverage,
  pct,
  procStats,
  relayDescribed,
  relayStart,
  round,
  round2,
  sleep,
  spawnFloor,
  tokenOf,
} from './common.ts';

export interface FloorRow {
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
   * The server's resident memory (VmRSS, MiB): started, before any client; with the first fifth
   * of the clients connected; with every client connected (a second after each burst); after the
   * last receipt. And, in KiB, (with clients - idle) / clients, which also counts what a server
   * grows by once at its first clients (V8's young generation taking its pages, compiled code: a
   * few MiB, 40-50 KiB "per client" at 200 clients), and the marginal cost, (with clients - with
   * the first fifth) / the other four fifths: the same measures for the relay and smee.io.
   */
  memoryMiB: {
    idle: number;
    withFirst: number;
    withClients: number;
    after: number;
    kibPerClient: number;
    marginalKibPerClient: number;
    /** The same of the anonymous memory alone (RssAnon: without executable and library pages). */
    anon: {
      idle: number;
      withFirst: number;
      withClients: number;
      after: number;
      kibPerClient: number;
      marginalKibPerClient: number;
    };
  };
  /**
   * The relay's own split of the live path (its /metrics, bucket bounds): webhook arrival to the
   * store's hand-over (relay_store_handover_ms), and one batch's fan-out (relay_fanout_ms).
   */
  relaySteps?: { handover: { p50: string; p99: string }; fanout: { p50: string; p99: string } };
  load: string;
}

/**
 * redis: one redis-server, AOF with fsync always (as src-relay/README.md asks of a single Redis);
 * redis-everysec: the same with `appendfsync everysec`; sentinel: a primary, a replica and three
 * sentinels (rigs/relay/sentinel-support.ts), AOF fsync always on both, storage.minReplicas 1
 * (every webhook answered after Redis WAIT); redis-nopersist: the same server without AOF (no
 * write to the disk at all: not a way to run the relay, but what Redis costs without its disk).
 * Not in the default list: BENCH_FLOOR_TARGETS names them.
 */
export type FloorTarget =
  'floor' | 'memory' | 'redis' | 'redis-everysec' | 'redis-nopersist' | 'sentinel' | 'smee';

/**
 * Latency under a fixed rate, over the floor (issue 24 item 4): `clients` clients spread over
 * `processes` load-generator processes (load-worker.ts), every webhook to every client at `rate`/s,
 * latency from each webhook's due time; the floor server, the relay on memory and on Redis, and
 * smee.io (when BENCH_SMEE_DIR names a checkout, smee-server.ts) in turn, rounds interleaved (the
 * order reversed every other round), the load average and the CPU of every process beside each.
 */
export async function floorCases(
  clients: number,
  processes: number,
  webhooks: number,
  rate: number,
  rounds: number,
  smeeDir: string | undefined,
): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  const pick = process.env.BENCH_FLOOR_TARGETS?.split(',');
  const order = (
    ['floor', 'memory', 'redis', 'redis-everysec', 'redis-nopersist', 'sentinel', 'smee'] as const
  ).filter(
    (t) =>
      (t !== 'smee' || smeeDir) &&
      (pick ? pick.includes(t) : t === 'floor' || t === 'memory' || t === 'redis' || t === 'smee'),
  );
  for (let round = 1; round <= rounds; round++)
    for (const target of round % 2 ? order : [...order].reverse())
      rows.push(await floorRun(target, round, clients, processes, webhooks, rate, smeeDir));
  return rows;
}

export async function floorRun(
  target: FloorTarget,
  roundNo: number,
  clients: number,
  processes: number,
  webhooks: number,
  rate: number,
  smeeDir: string | undefined,
): Promise<FloorRow> {
  const isRelay = target !== 'floor' && target !== 'smee';
  const service = isRelay ? await startTokenService(TOKENS) : undefined;
  const redisArgs: Partial<Record<FloorTarget, string[]>> = {
    redis: [],
    'redis-everysec': ['--appendfsync', 'everysec'],
    'redis-nopersist': ['--appendonly', 'no'],
  };
  const redis = redisArgs[target] ? await startRedis({ args: redisArgs[target] }) : undefined;
  const sentinels = target === 'sentinel' ? await startSentinelGroup() : undefined;
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
          ...(redis
            ? { RELAY_REDIS_URL: redis.url }
            : sentinels
              ? {
                  RELAY_REDIS_SENTINELS: sentinels.sentinels.join(','),
                  RELAY_REDIS_SENTINEL_NAME: sentinels.name,
                  RELAY_REDIS_MIN_REPLICAS: '1',
                }
              : { RELAY_STORAGE: 'memory' }),
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
        fork(fileURLToPath(new URL('../load-worker.ts', import.meta.url)), {
          serialization: 'advanced',
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        }),
      );
    // Two bursts, a fifth of each process's clients then the rest, so the memory a server takes
    // once at its first clients is told apart from what each client costs.
    const connectPart = async (part: 'first' | 'rest') => {
      const connected = await Promise.all(
        workers.map((w, p) => {
          const mine = Math.max(0, Math.min(per, clients - p * per));
          const first = Math.ceil(mine / 5);
          const tokens = Array.from({ length: part === 'first' ? first : mine - first }, (_, j) =>
            tokenOf(p * per + (part === 'first' ? 0 : first) + j),
          );
          const done = answer(w, 'connected');
          w.send({
            connect: { kind: target === 'smee' ? 'sse' : 'ws', url: streamUrl, hello, tokens },
          });
          return done.then((m) => m.connected as number);
        }),
      );
      // Let the connect burst settle (the relay's first GC, smee.io's log lines).
      await sleep(1000);
      return connected.reduce((a, b) => a + b, 0);
    };
    const firstCount = await connectPart('first');
    const withFirst = procStats(server.pid);
    const total = await connectPart('rest');
    if (total < clients) throw new Error(`${target}: ${total} of ${clients} clients connected`);
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
    let relaySteps: FloorRow['relaySteps'];
    if (isRelay) {
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      relaySteps = {
        handover: histogramQuantiles(metrics, 'relay_store_handover_ms'),
        fanout: histogramQuantiles(metrics, 'relay_fanout_ms'),
      };
    }
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
        withFirst: withFirst.rssMiB,
        withClients: server0.rssMiB,
        after: server1.rssMiB,
        kibPerClient: round(((server0.rssMiB - idle.rssMiB) * 1024) / clients),
        marginalKibPerClient: round(
          ((server0.rssMiB - withFirst.rssMiB) * 1024) / Math.max(1, total - firstCount),
        ),
        anon: {
          idle: idle.anonMiB,
          withFirst: withFirst.anonMiB,
          withClients: server0.anonMiB,
          after: server1.anonMiB,
          kibPerClient: round(((server0.anonMiB - idle.anonMiB) * 1024) / clients),
          marginalKibPerClient: round(
            ((server0.anonMiB - withFirst.anonMiB) * 1024) / Math.max(1, total - firstCount),
          ),
        },
      },
      ...(relaySteps && { relaySteps }),
      load,
    };
  } finally {
    for (const w of workers) if (w.connected) w.disconnect();
    for (const stop of stops) await stop();
    await redis?.stop();
    await sentinels?.stop();
    await service?.close();
  }
}

/** The latency-over-the-floor tables, as printed. */
export function floorLines(floors: readonly FloorRow[]): string[] {
  const lines: string[] = [];
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
  const floorOf = (f: FloorRow) => floors.find((x) => x.round === f.round && x.target === 'floor');
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
    `memory of each server in those runs (VmRSS, MiB; the relay ${relayDescribed()}): round  target  idle / with a fifth / with clients / after  KiB per client (from idle)  marginal KiB per client (from a fifth)`,
  );
  for (const f of floors)
    lines.push(
      `${String(f.round).padStart(5)}  ${f.target.padEnd(6)}  ${`${f.memoryMiB.idle} / ${f.memoryMiB.withFirst} / ${f.memoryMiB.withClients} / ${f.memoryMiB.after}`.padStart(36)}  ${String(f.memoryMiB.kibPerClient).padStart(26)}  ${String(f.memoryMiB.marginalKibPerClient).padStart(37)}`,
    );
  lines.push(
    'the anonymous part of it (RssAnon, MiB: without the pages of the executable and libraries): round  target  idle / with a fifth / with clients / after  KiB per client (from idle)  marginal KiB per client (from a fifth)',
  );
  for (const f of floors) {
    const a = f.memoryMiB.anon;
    lines.push(
      `${String(f.round).padStart(5)}  ${f.target.padEnd(6)}  ${`${a.idle} / ${a.withFirst} / ${a.withClients} / ${a.after}`.padStart(36)}  ${String(a.kibPerClient).padStart(26)}  ${String(a.marginalKibPerClient).padStart(37)}`,
    );
  }
  const steps = floors.filter((f) => f.relaySteps);
  if (steps.length) {
    lines.push(
      "the relay's own split of the live path (its /metrics, bucket bounds, ms): round  target  store hand-over p50 / p99  fan-out of a batch p50 / p99",
    );
    for (const f of steps)
      lines.push(
        `${String(f.round).padStart(5)}  ${f.target.padEnd(14)}  ${`${f.relaySteps!.handover.p50} / ${f.relaySteps!.handover.p99}`.padStart(24)}  ${`${f.relaySteps!.fanout.p50} / ${f.relaySteps!.fanout.p99}`.padStart(27)}`,
      );
  }
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
  lines.push(
    'memory over the rounds (min / median / max, KiB per client): target  VmRSS from idle  VmRSS marginal (from a fifth)  RssAnon from idle  RssAnon marginal',
  );
  for (const target of new Set(floors.map((f) => f.target))) {
    const rows = floors.filter((f) => f.target === target);
    lines.push(
      `  ${target.padEnd(6)}  ${spread(rows.map((f) => f.memoryMiB.kibPerClient))}  ${spread(rows.map((f) => f.memoryMiB.marginalKibPerClient))}  ${spread(rows.map((f) => f.memoryMiB.anon.kibPerClient))}  ${spread(rows.map((f) => f.memoryMiB.anon.marginalKibPerClient))}`,
    );
  }
  return lines;
}
