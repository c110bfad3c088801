/**
 * `npm run bench:yeastar-call-memory`: what the shared Yeastar call memory (issue 40 item 3,
 * src-relay/store/call-memory-redis.ts) costs a report, against the process's own memory (the
 * memory store's). A redis-server started here on 127.0.0.1; the relay's intake
 * (src-relay/yeastar-intake.ts `receive`) fed calls one report after the other, as a tenant's
 * webhooks arrive: a ring group of three on an outside call, one member a report (11 reports: the
 * caller, three rings, an answer, the hang-ups, a call record). Cases:
 *
 * - memory: the process's decoder keeps the calls (no Redis);
 * - redis, one instance: every report through one intake on the shared memory;
 * - redis, two instances: reports alternately through two intakes, each on its own connection;
 * - PING: one round trip to the same server, the floor of any Redis command;
 * - storing each report's envelopes (decoded beforehand; the reports with any): one append after
 *   the other, as the webhook handler did, against one script for all (`appendAll`, what it does
 *   now): an answered ring group's report carries three.
 *
 * Per case: µs per report (mean, p50, p99) and Redis round trips per report (the memory's reads
 * and writes; an append of the envelopes is the store's, not counted). BENCH_CALLS: calls fed
 * (default 300); BENCH_APPENDFSYNC: the server's appendfsync (default `always`, the test rig's: a
 * write waits for the disk; `everysec` as many deployments run). Prints a table and one JSON line.
 * No assertion: figures only.
 */
import { performance } from 'node:perf_hooks';
import type { RedisCallMemory } from '../src-relay/store/call-memory-redis.ts';
import type { RedisStore } from '../src-relay/store/redis-store.ts';
import type { NewEvent } from '../src-relay/store/types.ts';
import { YeastarIntake } from '../src-relay/yeastar-intake.ts';
import { openRedisStore, startRedis } from '../rigs/relay/helpers.ts';
import { ringGroupCall } from '../rigs/yeastar-ring-group.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 300);
/** The ring group call the relay's test decodes (rigs/yeastar-ring-group.ts), as webhook bodies. */
function call(callId: string): Buffer[] {
  return ringGroupCall(callId).map((s) => Buffer.from(s));
}

interface Figures {
  case: string;
  reports: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
  roundTripsPerReport: number | null;
}

function figures(name: string, times: number[], roundTrips: number | null): Figures {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (us: number) => Math.round(us * 10) / 10;
  return {
    case: name,
    reports: times.length,
    meanUs: round((times.reduce((a, b) => a + b, 0) / times.length) * 1000),
    p50Us: round(at(0.5) * 1000),
    p99Us: round(at(0.99) * 1000),
    roundTripsPerReport:
      roundTrips === null ? null : Math.round((roundTrips / times.length) * 100) / 100,
  };
}

async function feed(intakes: YeastarIntake[], prefix: string): Promise<number[]> {
  const times: number[] = [];
  let i = 0;
  for (let c = 0; c < CALLS; c++)
    for (const body of call(`${prefix}.${c}`)) {
      const intake = intakes[i++ % intakes.length]!;
      const t0 = performance.now();
      const r = await intake.receive('pbx', body, Date.now());
      times.push(performance.now() - t0);
      if (!r.ok) throw new Error(`report refused: ${r.reason}`);
    }
  return times;
}

const roundTrips = (stores: RedisStore[]) =>
  stores.reduce((n, s) => {
    const m = s.callMemory as RedisCallMemory;
    return n + m.counts.reads + m.counts.writes;
  }, 0);

const FSYNC = process.env.BENCH_APPENDFSYNC ?? 'always';
const redis = await startRedis({ args: ['--appendfsync', FSYNC] });
const stores: RedisStore[] = [];
try {
  const a = await openRedisStore(redis.url, ['pbx']);
  const b = await openRedisStore(redis.url, ['pbx']);
  stores.push(a, b);
  const mono = () => performance.now();
  // Warm-up (script loading, JIT), not counted.
  await feed([new YeastarIntake(mono, a.callMemory)], 'warm');
  const base = roundTrips([a, b]);
  const out: Figures[] = [];
  out.push(figures('memory (one process)', await feed([new YeastarIntake(mono)], 'm'), null));
  const one = await feed([new YeastarIntake(mono, a.callMemory)], 'one');
  out.push(figures('redis, one instance', one, roundTrips([a, b]) - base));
  const before = roundTrips([a, b]);
  const two = await feed(
    [new YeastarIntake(mono, a.callMemory), new YeastarIntake(mono, b.callMemory)],
    'two',
  );
  out.push(figures('redis, two instances alternately', two, roundTrips([a, b]) - before));
  const client = (a as unknown as { redis: { ping(): Promise<string> } }).redis;
  const pings: number[] = [];
  for (let i = 0; i < one.length; i++) {
    const t0 = performance.now();
    await client.ping();
    pings.push(performance.now() - t0);
  }
  out.push(figures('PING (one round trip)', pings, pings.length));
  // The envelopes each report gives (the memory store's decoder), stored both ways.
  const decoded = (prefix: string) => {
    const intake = new YeastarIntake(mono);
    const reports: NewEvent[][] = [];
    for (let c = 0; c < CALLS; c++)
      for (const body of call(`${prefix}.${c}`)) {
        const r = intake.decode('pbx', body, Date.now());
        if (r.ok && r.events.length > 0)
          reports.push(r.events.map((e) => ({ tenant: 'pbx', ...e, receivedAt: Date.now() })));
      }
    return reports;
  };
  const storeTimes = async (
    reports: NewEvent[][],
    store: (events: NewEvent[]) => Promise<unknown>,
  ) => {
    const times: number[] = [];
    for (const events of reports) {
      const t0 = performance.now();
      await store(events);
      times.push(performance.now() - t0);
    }
    return times;
  };
  const serial = decoded('serial');
  const envelopes = serial.reduce((n, r) => n + r.length, 0);
  out.push(
    figures(
      `store a report's envelopes: one append each (${envelopes} in ${serial.length} reports)`,
      await storeTimes(serial, async (events) => {
        for (const e of events) await a.append(e);
      }),
      envelopes,
    ),
  );
  const together = decoded('together');
  out.push(
    figures(
      "store a report's envelopes: one script (appendAll)",
      await storeTimes(together, (events) => a.appendAll(events)),
      together.length,
    ),
  );

  console.log(
    `Yeastar call memory, ${CALLS} calls of 11 reports, sequential, Redis on 127.0.0.1 (appendfsync ${FSYNC})`,
  );
  console.log('| Case | Reports | Mean µs | p50 µs | p99 µs | Round trips a report |');
  console.log('|---|---|---|---|---|---|');
  for (const f of out)
    console.log(
      `| ${f.case} | ${f.reports} | ${f.meanUs} | ${f.p50Us} | ${f.p99Us} | ${f.roundTripsPerReport ?? '-'} |`,
    );
  console.log(
    JSON.stringify({
      bench: 'yeastar-call-memory',
      calls: CALLS,
      appendfsync: FSYNC,
      results: out,
    }),
  );
} finally {
  for (const s of stores) await s.close();
  await redis.stop();
}
