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
 * BENCH_FLOOR_TARGETS=floor,memory picks some (also redis-everysec, redis-nopersist, sentinel: see
 * floor.ts). Each row gives the CPU of every process (poster, load processes, server) so that a
 * saturated generator or machine shows, each server's resident memory (idle, with a fifth of the
 * clients, with all, after; KiB per client from idle and marginal; VmRSS and its anonymous part,
 * RssAnon): the relay's beside smee.io's; and, for the relay, its own split of the live path
 * (relay_store_handover_ms and relay_fanout_ms from its /metrics).
 *
 * BENCH_ONLY=throughput|gap|connect|floor runs one part; BENCH_CASES=broadcast-100,open-loop picks cases.
 *
 * This file is the driver (which parts run, the report); each part is a module of bench/relay/:
 * throughput.ts, connect.ts, floor.ts, gap.ts, with common.ts (secret, tokens, starting the relay,
 * /proc figures, connecting clients, the floor server).
 */
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { BACKENDS, round } from './relay/common.ts';
import {
  CASES,
  type CaseResult,
  runCase,
  type IdleResult,
  idleCase,
  throughputLines,
} from './relay/throughput.ts';
import { type ConnectRow, connectCase, connectLines } from './relay/connect.ts';
import { type FloorRow, floorCases, floorLines } from './relay/floor.ts';
import { type GapResult, gapLines, gapRun } from './relay/gap.ts';

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
  lines.push(...throughputLines(results, idle));
  if (connect.length) lines.push(...connectLines(connect));
  if (floors.length) lines.push(...floorLines(floors));
  lines.push(...gapLines(gaps));
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
