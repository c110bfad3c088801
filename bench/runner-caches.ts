/**
 * The caches part of `npm run bench:runner` (`BENCH_ONLY=caches` runs it alone): what the runner's
 * bounded maps hold, and cost, on a busy tenant, in simulated time.
 *
 * 1. Plateau: a tenant-wide stream of calls (the direct stream carries every call of the tenant)
 *    through EventPipeline.ingest, on a simulated clock advanced call by call, for BENCH_CACHE_HOURS
 *    simulated hours (default 26: past the dedupe window of 25 h). The heap after a GC is sampled
 *    every simulated half hour, twice side by side: with the bounds as they were (calls 50,000) and
 *    as they are (call-tracker.ts). Once every map is full (or its entries expire) the heap stops
 *    growing: that is the plateau.
 * 2. Ceiling: each map filled to its bound with the largest entries the wire allows (ids of 128
 *    characters; calls with 16 parties whose numbers have 256 characters), the heap measured before
 *    and after: the most that map can ever hold, in bytes. The old call bound's is computed from
 *    the bytes of one entry (filling it would take ~200 MB of a shared machine).
 *
 * The stream: BENCH_CACHE_CALLS_PER_HOUR calls (default 21,000: 1,000 agents at
 * CALLS_PER_AGENT_HOUR), each ringing, answered and ended (60 %), missed (20 %), or a ring group of
 * three where one answers (20 %), as the simulator's traffic; every 50th call rings the user's
 * extension, pops and is dismissed. Ids are 36-character UUIDs, as the service sends.
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import { EventPipeline } from '../src-main/core/events/pipeline.ts';
import { DedupeSet, DEFAULT_DEDUPE } from '../src-main/core/events/dedupe.ts';
import {
  CallTracker,
  DEFAULT_STALE_RING_MS,
  MAX_POPPED_CALLS,
  maxTrackedCalls,
} from '../src-main/core/events/call-tracker.ts';
import { UserNumberMatcher } from '../src-main/core/events/numbers.ts';
import type { CallStateData, Envelope } from '../src-shared/wire/envelope.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * A busy agent's calls per hour: 3,600 s / 149 s average handle time (the shortest industry
 * average in centrical.com/resources/call-center-average-handle-time: healthcare) x 87 % occupancy
 * (the top of the benchmark range in opsdog.com/products/occupancy-rate) = 21.
 */
const CALLS_PER_AGENT_HOUR = 21;

/** The call map's bound at the default stale-ring limit. */
const MAX_TRACKED_CALLS = maxTrackedCalls(DEFAULT_STALE_RING_MS);

const HOURS = Number(process.env.BENCH_CACHE_HOURS ?? 26);
const CALLS_PER_HOUR = Number(
  process.env.BENCH_CACHE_CALLS_PER_HOUR ?? 1_000 * CALLS_PER_AGENT_HOUR,
);
const SAMPLE_EVERY_MS = 30 * 60_000;
/** The bound of the call map before issue 24 sized it. */
const OLD_MAX_CALLS = 50_000;
const USER_EXT = '101';

const MiB = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** The heap in use after two full collections. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A clock driven by the benchmark: time moves only when `advance` is called. */
function simulatedClock(): Clock & { advance(ms: number): void } {
  let mono = 0;
  const wall0 = Date.UTC(2026, 10, 24, 8, 0, 0);
  return {
    now: () => wall0 + mono,
    monotonic: () => mono,
    setTimeout: () => 0 as unknown as TimerHandle,
    clearTimeout: () => {},
    advance(ms) {
      mono += ms;
    },
  };
}

/** A deterministic generator (the same stream for both pipelines). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface PlateauSample {
  hour: number;
  events: number;
  dedupeIds: number;
  callsTracked: number;
  heapMiB: number;
}

/** The frames of one call, in order: [to, state] pairs. */
function callSteps(random: () => number, n: number): Array<[string, string]> {
  const agent = () => String(2000 + Math.floor(random() * 1000));
  const first = n % 50 === 0 ? USER_EXT : agent();
  const shape = random();
  if (shape < 0.6)
    return [
      [first, 'ringing'],
      [first, 'answered'],
      [first, 'ended'],
    ];
  if (shape < 0.8)
    return [
      [first, 'ringing'],
      [first, 'ended'],
    ];
  const others = [agent(), agent()];
  return [
    [first, 'ringing'],
    ...others.map((to): [string, string] => [to, 'ringing']),
    [first, 'answered'],
    ...others.map((to): [string, string] => [to, 'ended']),
    [first, 'ended'],
  ];
}

interface PlateauRun {
  samples: PlateauSample[];
  eventsPerCall: number;
  pops: number;
}

/**
 * One pipeline fed the stream, its heap sampled. A function of its own: a finished run's pipeline
 * must not stay reachable from a register of a still running frame (it did, inflating the next
 * run's baseline by 15 MiB).
 */
function plateauRun(maxCalls: number | undefined): PlateauRun {
  const random = seeded(24);
  const clock = simulatedClock();
  const base = heapUsed();
  const pipeline = new EventPipeline({
    clock,
    user: { extensions: [USER_EXT], dids: [], defaultRegion: 'US' },
    ...(maxCalls !== undefined ? { calls: { maxCalls } } : {}),
  });
  let pops = 0;
  pipeline.onPop(() => pops++);
  const stepMs = 3_600_000 / CALLS_PER_HOUR;
  const calls = Math.round(HOURS * CALLS_PER_HOUR);
  const samples: PlateauSample[] = [];
  let events = 0;
  let nextSample = SAMPLE_EVERY_MS;
  for (let n = 0; n < calls; n++) {
    const callId = randomUUID();
    for (const [to, state] of callSteps(random, n)) {
      const envelope = {
        event: 30011,
        timestamp: clock.now(),
        tenant: 'acme',
        event_id: randomUUID(),
        data: { call_id: callId, from: '+14155550100', to, state },
      };
      pipeline.ingest(JSON.stringify(envelope), { source: 'direct', receivedAt: clock.now() });
      events++;
    }
    clock.advance(stepMs);
    if (clock.monotonic() >= nextSample) {
      nextSample += SAMPLE_EVERY_MS;
      const stats = pipeline.stats();
      samples.push({
        hour: Math.round((clock.monotonic() / 3_600_000) * 10) / 10,
        events,
        dedupeIds: stats.dedupeSize,
        callsTracked: stats.callsTracked,
        heapMiB: MiB(heapUsed() - base),
      });
    }
  }
  return { samples, eventsPerCall: events / calls, pops };
}

/** The same stream through the bounds as they were, then as they are. */
function plateau(): {
  samples: Record<'old' | 'new', PlateauSample[]>;
  eventsPerCall: number;
  pops: number;
} {
  const old = plateauRun(OLD_MAX_CALLS);
  const now = plateauRun(undefined);
  return {
    samples: { old: old.samples, new: now.samples },
    eventsPerCall: now.eventsPerCall,
    pops: now.pops,
  };
}

interface Ceiling {
  map: string;
  bound: string;
  entry: string;
  MiB: number;
  bytesPerEntry: number;
  how: string;
}

/**
 * An id of `length` characters, as one flat string as JSON.parse makes them (padEnd alone gives a
 * rope of pieces, ~200 B more per string).
 */
const longId = (prefix: string, i: number, length = 128): string =>
  JSON.parse(JSON.stringify(`${prefix}${i}`.padEnd(length, 'x'))) as string;

/** The event-id set at its bound, ids of `idLength` characters. */
function dedupeCeiling(idLength: number, entry: string): Ceiling {
  const base = heapUsed();
  const set = new DedupeSet();
  for (let i = 0; i < DEFAULT_DEDUPE.maxIds; i++) set.firstSeen(longId('e', i, idLength), 0);
  const bytes = heapUsed() - base;
  if (set.size !== DEFAULT_DEDUPE.maxIds) throw new Error('the dedupe set is not full');
  return {
    map: 'event ids (dedupe.ts)',
    bound: `${DEFAULT_DEDUPE.maxIds.toLocaleString('en')} ids / 25 h`,
    entry,
    MiB: MiB(bytes),
    bytesPerEntry: Math.round(bytes / DEFAULT_DEDUPE.maxIds),
    how: 'filled through DedupeSet.firstSeen',
  };
}

/** A call tracker filled with `maxCalls` calls of `parties` parties, numbers of `length` characters. */
function callsCeiling(maxCalls: number, parties: number, length: number, entry: string): Ceiling {
  const base = heapUsed();
  const tracker = new CallTracker({ maxCalls });
  const matcher = new UserNumberMatcher({ extensions: [USER_EXT], dids: [], defaultRegion: 'US' });
  const event = (callId: string, to: string, state: string, ts: number) => {
    const call: CallStateData = { call_id: callId, from: '+14155550100', to, state };
    const data = { call_id: callId, from: call.from, to, state };
    const envelope: Envelope = { event: 30011, timestamp: ts, tenant: 'acme', event_id: 'x', data };
    tracker.handle(envelope, call, matcher, () => 0, 0);
  };
  const idLength = length === 256 ? 256 : 36;
  for (let i = 0; i < maxCalls; i++) {
    const callId = longId('c', i, idLength);
    for (let p = 0; p < parties; p++) {
      const to = length > 8 ? longId(`${p}-`, i, length) : String(2000 + p);
      event(callId, to, 'ended', 1_000 + p);
    }
  }
  // The user's own popped calls, at their bound.
  for (let i = 0; i < MAX_POPPED_CALLS; i++)
    event(longId('p', i, idLength), USER_EXT, 'ringing', 5_000);
  const bytes = heapUsed() - base;
  return {
    map: 'calls (call-tracker.ts)',
    bound: `${maxCalls.toLocaleString('en')} calls + ${MAX_POPPED_CALLS.toLocaleString('en')} popped / 1 h`,
    entry,
    MiB: MiB(bytes),
    bytesPerEntry: Math.round(bytes / (maxCalls + MAX_POPPED_CALLS)),
    how: 'filled through CallTracker.handle',
  };
}

export interface CachesReport {
  callsPerHour: number;
  hours: number;
  eventsPerCall: number;
  pops: number;
  plateau: Record<'old' | 'new', PlateauSample[]>;
  ceilings: Ceiling[];
}

export function cachesBench(): CachesReport {
  const { samples, eventsPerCall, pops } = plateau();
  const calls = callsCeiling(
    MAX_TRACKED_CALLS,
    16,
    256,
    '16 parties, 256-character numbers and ids',
  );
  const ceilings = [
    dedupeCeiling(36, 'as the service sends: 36-character id'),
    dedupeCeiling(128, 'largest accepted: 128-character id'),
    callsCeiling(
      MAX_TRACKED_CALLS,
      3,
      4,
      'a ring group: 3 parties, 4-digit numbers, 36-character ids',
    ),
    calls,
    {
      ...calls,
      map: 'calls, the bound before issue 24',
      bound: `${OLD_MAX_CALLS.toLocaleString('en')} calls + ${MAX_POPPED_CALLS.toLocaleString('en')} popped / 1 h`,
      MiB: MiB(calls.bytesPerEntry * (OLD_MAX_CALLS + MAX_POPPED_CALLS)),
      how: 'computed: the bytes of one entry above x the old bound (filling it takes ~200 MB)',
    },
  ];
  return {
    callsPerHour: CALLS_PER_HOUR,
    hours: HOURS,
    eventsPerCall: Math.round(eventsPerCall * 100) / 100,
    pops,
    plateau: samples,
    ceilings,
  };
}

export function printCaches(report: CachesReport): void {
  console.log(
    `\ncaches: ${report.callsPerHour.toLocaleString('en')} calls/h tenant-wide (${report.eventsPerCall} events a call), ${report.hours} simulated hours through EventPipeline.ingest; ${report.pops} pops`,
  );
  console.log('hour   events      dedupe ids  calls (old / new)   heap MiB old / new');
  const { old, new: now } = report.plateau;
  for (let i = 0; i < now.length; i += 2) {
    const o = old[i];
    const n = now[i]!;
    console.log(
      [
        String(n.hour).padEnd(7),
        n.events.toLocaleString('en').padEnd(12),
        n.dedupeIds.toLocaleString('en').padEnd(12),
        `${o?.callsTracked.toLocaleString('en') ?? '-'} / ${n.callsTracked.toLocaleString('en')}`.padEnd(
          20,
        ),
        `${o?.heapMiB ?? '-'} / ${n.heapMiB}`,
      ].join(''),
    );
  }
  console.log('ceiling at full bounds (largest entries the wire allows):');
  for (const c of report.ceilings)
    console.log(
      `  ${c.map.padEnd(44)} ${c.bound.padEnd(36)} ${String(c.MiB).padStart(6)} MiB (${c.bytesPerEntry} B each; ${c.entry}; ${c.how})`,
    );
}
