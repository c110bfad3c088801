/**
 * `npm run bench:events [-- --seconds 20 --rate 2000 --events 1000000]`
 *
 * 1. Latency: the simulator sends background traffic for other extensions (~2,000 events/s) plus a
 *    ring for extension 101 every 37 ms. For each ring we measure from the simulator's send
 *    (sim.onSent, performance.now()) to (a) the pop callback of ScreenpopEngine (WebSocket source,
 *    parse, dedupe, offset, call tracker) and (b) the 'message' event of a bare `ws` client
 *    subscribed to the same frames in the same run: the transport's floor. Everything runs in this
 *    one process (simulator, both clients), so both numbers include the same event-loop sharing.
 * 2. Memory and throughput: one million synthetic 30011 envelopes (distinct ids and calls, a ring
 *    for the user every 1,000) fed straight into EventPipeline.ingest (no sockets), RSS sampled
 *    every 100,000 after a GC.
 * Prints one JSON object, then a readable table.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { systemClock } from '../src-shared/process/clock.ts';
import { ServiceClient } from '../src-shared/api/service-client.ts';
import { TokenManager } from '../src-main/core/api/token-manager.ts';
import { ScreenpopEngine } from '../src-main/core/engine.ts';
import { EventPipeline } from '../src-main/core/events/pipeline.ts';
import { subscribeUrl } from '../src-shared/wire/standard.ts';
import { startSimulator } from '../src-sim/index.ts';
import { directTransport } from '../rigs/direct-transport.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    rate: { type: 'string', default: '2000' },
    events: { type: 'string', default: '1000000' },
  },
});
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const EVENTS = Number(values.events);
const USER_EXT = '101';
const WARMUP_MS = 2_000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function percentiles(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    n: s.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(s.at(-1) ?? NaN),
  };
}

async function latency() {
  const sim = await startSimulator({ extensions: 40 });
  const net = directTransport();
  const tokens = new TokenManager({
    client: new ServiceClient({ baseUrl: sim.baseUrl, clock: systemClock, fetch: net.fetch }),
    credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    clock: systemClock,
  });
  const engine = new ScreenpopEngine({
    baseUrl: sim.baseUrl,
    tokens,
    clock: systemClock,
    mode: 'direct',
    user: { extensions: [USER_EXT], dids: [], defaultRegion: 'US' },
    createSocket: net.createSocket,
    fetch: net.fetch,
  });

  const sentById = new Map<string, number>();
  const sentByText = new Map<string, number>();
  let measuring = false;
  sim.onSent((envelope, text) => {
    if (!measuring || envelope.event !== 30011) return;
    const d = envelope.data as { to?: unknown; state?: unknown };
    if (d.to !== USER_EXT || d.state !== 'ringing') return;
    const now = performance.now();
    sentById.set(envelope.event_id, now);
    sentByText.set(text, now);
  });
  const popLatency: number[] = [];
  const bareLatency: number[] = [];
  engine.onPop((p) => {
    const sent = sentById.get(p.eventId);
    if (sent !== undefined) popLatency.push(performance.now() - sent);
  });

  // Which socket the simulator writes first (and the event loop reads first) matters at this
  // scale, so the run has two halves: the bare client connected before the engine's socket, then
  // reconnected after it. Both halves are reported; the headline figures pool them.
  const token = await tokens.getToken();
  const connectBare = async (into: number[]) => {
    const ws = new WebSocket(subscribeUrl(sim.baseUrl), {
      headers: { Authorization: `Bearer ${token.value}` },
      perMessageDeflate: false,
    });
    ws.on('open', () => ws.send(JSON.stringify({ topic_list: [30011] })));
    ws.on('message', (data) => {
      const now = performance.now();
      const sent = sentByText.get(data.toString());
      if (sent !== undefined) into.push(now - sent);
    });
    await new Promise((r) => ws.once('message', r)); // the subscribe ack
    return ws;
  };
  const bareFirst: number[] = [];
  const bareSecond: number[] = [];
  let bare = await connectBare(bareFirst);
  engine.start();
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (engine.status().state === 'connected') {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });

  const sentBefore = sim.stats().eventsSent;
  sim.startTraffic({ ratePerSec: RATE, excludeExtensions: [USER_EXT] });
  let n = 0;
  const ringer = setInterval(() => {
    const callId = sim.ring({ from: `+1415555${String(1000 + (n++ % 9000))}`, to: USER_EXT });
    setTimeout(() => sim.setCallState(callId, 'answered'), 200);
  }, 37);
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  const popFirstHalf: number[] = [];
  let elapsed = 0;
  let sentDuring = 0;
  for (const half of [0, 1]) {
    if (half === 1) {
      bare.close();
      bare = await connectBare(bareSecond);
      await new Promise((r) => setTimeout(r, 500));
    }
    measuring = true;
    const started = performance.now();
    const sentAtStart = sim.stats().eventsSent;
    await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
    measuring = false;
    elapsed += (performance.now() - started) / 1000;
    sentDuring += sim.stats().eventsSent - sentAtStart;
    if (half === 0) popFirstHalf.push(...popLatency);
  }
  const popSecondHalf = popLatency.slice(popFirstHalf.length);
  bareLatency.push(...bareFirst, ...bareSecond);
  clearInterval(ringer);
  sim.stopTraffic();
  await new Promise((r) => setTimeout(r, 300));
  const stats = engine.stats();
  bare.close();
  await engine.stop();
  tokens.stop();
  await sim.close();
  const pop = percentiles(popLatency);
  const floor = percentiles(bareLatency);
  return {
    durationSec: Math.round(elapsed * 10) / 10,
    // Each frame goes to two sockets; eventsSent counts envelopes.
    eventsPerSec: Math.round(sentDuring / elapsed),
    totalEventsSent: sim.stats().eventsSent - sentBefore,
    ringsMeasured: sentById.size,
    popLatencyMs: pop,
    bareWsLatencyMs: floor,
    ratio: {
      p50: round2(pop.p50 / floor.p50),
      p95: round2(pop.p95 / floor.p95),
      p99: round2(pop.p99 / floor.p99),
    },
    addedMs: {
      p50: round3(pop.p50 - floor.p50),
      p95: round3(pop.p95 - floor.p95),
      p99: round3(pop.p99 - floor.p99),
    },
    halves: {
      bareReadFirst: { pop: percentiles(popFirstHalf), bare: percentiles(bareFirst) },
      bareReadSecond: { pop: percentiles(popSecondHalf), bare: percentiles(bareSecond) },
    },
    pipeline: {
      events: stats.events,
      duplicates: stats.duplicates,
      pops: stats.pops,
      rejected: stats.rejected,
    },
  };
}

function round2(n: number) {
  return Math.round(n * 100) / 100;
}
function round3(n: number) {
  return Math.round(n * 1000) / 1000;
}

function memory() {
  const pipeline = new EventPipeline({
    clock: systemClock,
    user: { extensions: [USER_EXT], dids: ['+14155550100'], defaultRegion: 'US' },
  });
  let pops = 0;
  pipeline.onPop(() => pops++);
  const states = ['ringing', 'answered', 'hold', 'ended'];
  const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;
  gc();
  const rss: Array<{ events: number; rssMb: number; heapMb: number }> = [
    { events: 0, rssMb: mb(process.memoryUsage().rss), heapMb: mb(process.memoryUsage().heapUsed) },
  ];
  let ingestMs = 0;
  const batch: string[] = [];
  for (let i = 0; i < EVENTS;) {
    // Build a batch of frames first, so the timing is ingest alone.
    batch.length = 0;
    for (let k = 0; k < 10_000 && i + k < EVENTS; k++) {
      const j = i + k;
      const forUser = j % 1000 === 0;
      batch.push(
        JSON.stringify({
          event: 30011,
          timestamp: Date.now(),
          tenant: 'acme',
          data: {
            call_id: `call-${Math.floor(j / 4)}`,
            from: '+12125550100',
            to: forUser ? USER_EXT : String(200 + (j % 300)),
            state: forUser ? 'ringing' : states[j % 4],
          },
          event_id: `evt-${j}`,
        }),
      );
    }
    const t0 = performance.now();
    for (const frame of batch) pipeline.ingest(frame, { source: 'bench', receivedAt: Date.now() });
    ingestMs += performance.now() - t0;
    i += batch.length;
    if (i % 100_000 === 0 || i === EVENTS) {
      gc();
      const m = process.memoryUsage();
      rss.push({ events: i, rssMb: mb(m.rss), heapMb: mb(m.heapUsed) });
    }
  }
  const s = pipeline.stats();
  const half = rss.find((r) => r.events >= EVENTS / 2) ?? rss[0]!;
  const last = rss.at(-1)!;
  return {
    events: EVENTS,
    ingestPerSec: Math.round(EVENTS / (ingestMs / 1000)),
    ingestMicrosPerEvent: round3((ingestMs * 1000) / EVENTS),
    pops,
    dedupeSize: s.dedupeSize,
    callsTracked: s.callsTracked,
    rssSamples: rss,
    rssGrowthSecondHalfMb: round2(last.rssMb - half.rssMb),
    heapGrowthSecondHalfMb: round2(last.heapMb - half.heapMb),
  };
}

const lat = await latency();
const mem = memory();
const result = {
  command: `npm run bench:events -- --seconds ${SECONDS} --rate ${RATE} --events ${EVENTS}`,
  node: process.version,
  latency: lat,
  memory: mem,
};
process.stdout.write(JSON.stringify(result, null, 2) + '\n\n');

const row = (name: string, p: { n: number; p50: number; p95: number; p99: number; max: number }) =>
  `${name.padEnd(28)} ${String(p.n).padStart(6)} ${p.p50.toFixed(3).padStart(9)} ${p.p95.toFixed(3).padStart(9)} ${p.p99.toFixed(3).padStart(9)} ${p.max.toFixed(3).padStart(9)}`;
const lines = [
  `Latency, simulator send -> callback, ms (${lat.eventsPerSec} events/s background, ${lat.durationSec} s)`,
  `${'path'.padEnd(28)} ${'n'.padStart(6)} ${'p50'.padStart(9)} ${'p95'.padStart(9)} ${'p99'.padStart(9)} ${'max'.padStart(9)}`,
  row('bare ws (transport floor)', lat.bareWsLatencyMs),
  row('Screenpop pop', lat.popLatencyMs),
  row('  half 1: bare read first', lat.halves.bareReadFirst.bare),
  row('  half 1: pop', lat.halves.bareReadFirst.pop),
  row('  half 2: bare read second', lat.halves.bareReadSecond.bare),
  row('  half 2: pop', lat.halves.bareReadSecond.pop),
  `${'ratio pop / floor'.padEnd(28)} ${''.padStart(6)} ${lat.ratio.p50.toFixed(2).padStart(9)} ${lat.ratio.p95.toFixed(2).padStart(9)} ${lat.ratio.p99.toFixed(2).padStart(9)}`,
  `${'added by the pipeline (ms)'.padEnd(28)} ${''.padStart(6)} ${lat.addedMs.p50.toFixed(3).padStart(9)} ${lat.addedMs.p95.toFixed(3).padStart(9)} ${lat.addedMs.p99.toFixed(3).padStart(9)}`,
  '',
  `Memory, ${mem.events.toLocaleString('en')} events fed to EventPipeline.ingest directly (no sockets)`,
  `ingest: ${mem.ingestPerSec.toLocaleString('en')} events/s (${mem.ingestMicrosPerEvent} µs/event); pops ${mem.pops}; dedupe ${mem.dedupeSize}; calls tracked ${mem.callsTracked}`,
  ...mem.rssSamples.map(
    (r) =>
      `  after ${String(r.events).padStart(8)} events: RSS ${String(r.rssMb).padStart(7)} MB, heap ${String(r.heapMb).padStart(7)} MB`,
  ),
  `RSS growth over the second half: ${mem.rssGrowthSecondHalfMb} MB (heap ${mem.heapGrowthSecondHalfMb} MB)`,
];
process.stdout.write(lines.join('\n') + '\n');
