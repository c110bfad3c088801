/**
 * `npm run bench:reconnect [-- --trials 15 --outages 20,120,600,2400 --caps 30:300,15:60,10:30,10:10]`
 *
 * `--caps stream:token,...`: the ceilings (s) of the stream's and the token requests' back-off.
 *
 * How long after the service comes back the event stream is up again, per back-off ceiling: the
 * figures behind STREAM_BACKOFF's and TOKEN_BACKOFF's caps (src-shared/kit/backoff.ts).
 *
 * The real parts, on one FakeClock with real sockets (as test/api/token-scenarios.ts): the
 * simulator, a ServiceClient and TokenManager, and the direct WebSocketEventSource. An outage is
 * the simulator closed (every socket dropped, connections refused) and, after the outage, started
 * again on the same port without its tokens, as after a server restart. Measured on the fake
 * clock: from the restart to the source's `connected` status ("back after"), and how many
 * reconnects and token requests one desktop made per minute of outage (the load a fleet of
 * desktops puts on the service while it recovers).
 *
 * Prints one JSON object, then a table. Not a test: figures only.
 */
import { parseArgs } from 'node:util';
import { memoryLogger } from '../rigs/memory-logger.ts';
import { ServiceClient } from '../src-shared/api/service-client.ts';
import { TokenManager } from '../src-main/core/api/token-manager.ts';
import { TOKEN_BACKOFF, STREAM_BACKOFF } from '../src-shared/kit/backoff.ts';
import { WebSocketEventSource } from '../src-main/core/events/ws-source.ts';
import { startSimulator, type Simulator } from '../src-sim/index.ts';
import { FakeClock, advanceWithRealIo } from '../rigs/fake-clock.ts';
import { directTransport } from '../rigs/direct-transport.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '15' },
    outages: { type: 'string', default: '20,120,600,2400' },
    caps: { type: 'string', default: '30:300,15:60,10:30,10:10' }, // 30:300 was the ceiling before issue 21
  },
});
const TRIALS = Number(values.trials);
const OUTAGES_SEC = values.outages.split(',').map(Number);
const CAPS = values.caps.split(',').map((pair) => {
  const [stream, token] = pair.split(':').map(Number);
  return { streamSec: stream!, tokenSec: token ?? stream! };
});
const STEP_MS = 250;

interface Trial {
  backAfterMs: number;
  reconnectsPerMin: number;
  tokenRequestsPerMin: number;
}

async function trial(
  caps: { streamSec: number; tokenSec: number },
  outageSec: number,
  seed: number,
): Promise<Trial> {
  const clock = new FakeClock();
  let sim: Simulator = await startSimulator({ clock, seed: 7, extensions: 3 });
  const port = Number(new URL(sim.baseUrl).port);
  const logger = memoryLogger();
  let tokenRequests = 0;
  const transport = directTransport();
  const client = new ServiceClient({ baseUrl: sim.baseUrl, clock, fetch: transport.fetch });
  // Both token calls count: a long outage outlives the access token, and its renewal is a refresh.
  const counted = Object.assign(Object.create(client) as ServiceClient, {
    getToken: (key: string, secret: string) => {
      tokenRequests++;
      return client.getToken(key, secret);
    },
    refreshToken: (token: string, expiresAt?: number) => {
      tokenRequests++;
      return client.refreshToken(token, expiresAt);
    },
  });
  let random = seed;
  const rng = () => {
    // xorshift: each trial its own reproducible jitter
    random ^= random << 13;
    random ^= random >>> 17;
    random ^= random << 5;
    return ((random >>> 0) % 1_000_000) / 1_000_000;
  };
  const tokens = new TokenManager({
    client: counted,
    credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    clock,
    logger,
    random: rng,
    backoff: { ...TOKEN_BACKOFF, capMs: caps.tokenSec * 1000 },
  });
  const source = new WebSocketEventSource({
    baseUrl: sim.baseUrl,
    tokens,
    clock,
    logger,
    topics: [30011],
    createSocket: transport.createSocket,
    random: rng,
    backoff: { capMs: caps.streamSec * 1000 },
  });
  source.start();
  while (source.status().state !== 'connected') await advanceWithRealIo(clock, STEP_MS, STEP_MS);
  // Stay up past the stable period, so the back-off starts from its base.
  await advanceWithRealIo(clock, 40_000, 1_000);

  await sim.close();
  const before = { reconnects: countReconnects(logger.records), tokens: tokenRequests };
  // 1 s steps: every timer still fires at its own time; only the real I/O lands up to 1 s later.
  await advanceWithRealIo(clock, outageSec * 1000, 1_000);
  const during = {
    reconnects: countReconnects(logger.records) - before.reconnects,
    tokens: tokenRequests - before.tokens,
  };
  sim = await startSimulator({ clock, seed: 7, extensions: 3, port });
  const back = clock.monotonic();
  while (source.status().state !== 'connected') await advanceWithRealIo(clock, STEP_MS, STEP_MS);
  const backAfterMs = clock.monotonic() - back;
  await source.stop();
  tokens.stop();
  await sim.close();
  return {
    backAfterMs,
    reconnectsPerMin: (during.reconnects / outageSec) * 60,
    tokenRequestsPerMin: (during.tokens / outageSec) * 60,
  };
}

function countReconnects(records: ReadonlyArray<{ msg: string }>): number {
  return records.filter((r) => r.msg === 'reconnecting after').length;
}

function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  const r = (n: number) => Math.round(n * 10) / 10;
  return { mean: r(mean), p50: r(at(0.5)), p90: r(at(0.9)), max: r(s.at(-1) ?? NaN) };
}

const results: Array<{
  streamCapSec: number;
  tokenCapSec: number;
  outageSec: number;
  backAfterSec: ReturnType<typeof summary>;
  reconnectsPerMin: number;
  tokenRequestsPerMin: number;
}> = [];
for (const caps of CAPS) {
  for (const outageSec of OUTAGES_SEC) {
    const trials: Trial[] = [];
    for (let i = 0; i < TRIALS; i++)
      trials.push(await trial(caps, outageSec, 0x9e3779b1 + i * 7919));
    results.push({
      streamCapSec: caps.streamSec,
      tokenCapSec: caps.tokenSec,
      outageSec,
      backAfterSec: summary(trials.map((t) => t.backAfterMs / 1000)),
      reconnectsPerMin: summary(trials.map((t) => t.reconnectsPerMin)).mean,
      tokenRequestsPerMin: summary(trials.map((t) => t.tokenRequestsPerMin)).mean,
    });
  }
}

console.log(
  JSON.stringify(
    {
      trials: TRIALS,
      current: {
        streamCapSec: STREAM_BACKOFF.capMs / 1000,
        tokenCapSec: TOKEN_BACKOFF.capMs / 1000,
      },
      results,
    },
    null,
    2,
  ),
);
console.log(
  '\ncaps stream:token (s) | outage (s) | back after: mean / p50 / p90 / max (s) | reconnects/min | token requests/min',
);
for (const r of results)
  console.log(
    `${`${r.streamCapSec}:${r.tokenCapSec}`.padStart(20)} | ${String(r.outageSec).padStart(10)} | ${[r.backAfterSec.mean, r.backAfterSec.p50, r.backAfterSec.p90, r.backAfterSec.max].join(' / ').padStart(38)} | ${r.reconnectsPerMin.toFixed(1).padStart(14)} | ${r.tokenRequestsPerMin.toFixed(1).padStart(18)}`,
  );
