/**
 * `npm run bench:relay`: figures for the webhook relay (docs/relay-protocol.md, src-relay/README.md).
 *
 * Part 1, throughput and latency, for the in-memory and the Redis backends: the relay runs as its
 * own process (`node src-relay/cli.ts`, as deployed; Redis with AOF and fsync always), 1,000 client
 * WebSockets are connected from this process, and signed webhooks are posted with a fixed
 * concurrency. Each event is addressed to one of 100 extensions and so reaches K = 10 clients.
 * Reported: webhooks accepted per second (signature checked, stored, 2xx), latency from the
 * webhook leaving the poster (on loopback, its arrival) to each client's receipt (p50, p99, max),
 * and the relay process's memory (VmRSS / VmHWM).
 *
 * Part 2, the gap each strategy leaves when the direct stream drops (simulator, in process): hot
 * standby (relay attached all along) against switch-on-failure (relay started when the direct
 * source leaves `connected`), for a clean close and for a half-open stall.
 *
 * Bounded: fixed counts and time-outs; everything it starts it stops. Prints a table and JSON.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { WebSocket } from 'ws';
import { systemClock } from '../src-main/core/clock.ts';
import { ServiceClient } from '../src-main/core/api/service-client.ts';
import { TokenManager } from '../src-main/core/api/token-manager.ts';
import { EventPipeline } from '../src-main/core/events/pipeline.ts';
import { WebSocketEventSource } from '../src-main/core/events/ws-source.ts';
import { decodeControl, relayClientPath } from '../src-main/core/relay-client/protocol.ts';
import { relayFilterFor } from '../src-main/core/relay-client/filter.ts';
import { RelayEventSource } from '../src-main/core/relay-client/relay-source.ts';
import { silentLogger } from '../src-main/core/log.ts';
import { startRelay } from '../src-relay/server.ts';
import { defaultConfig } from '../src-relay/config.ts';
import { MemoryStore } from '../src-relay/store/memory-store.ts';
import { signBody } from '../src-relay/signature.ts';
import { startSimulator } from '../src-sim/index.ts';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use.
import { startRedis, startTokenService } from '../test/relay/helpers.ts';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const EXTENSIONS = 100; // K = CLIENTS / EXTENSIONS clients receive each event
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 3000);
const CONCURRENCY = 32;
const PACED_RATE = 100;
const PACED_COUNT = 300;
const SECRET = 'bench-webhook-secret-0123456789';
const TOKEN = 'bench-client-token';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function startRelayProcess(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_RELAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []), 'src-relay/cli.ts'],
    {
      env: { ...process.env, ...env, RELAY_PORT: '0', RELAY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('relay did not start'));
    }, 15_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /relay listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`relay exited with ${code}`)));
  });
  return {
    url,
    child,
    async stop() {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

function memoryOf(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rssMiB: round(kb('VmRSS') / 1024), hwmMiB: round(kb('VmHWM') / 1024) };
}

interface BackendResult {
  backend: string;
  clients: number;
  fanOutK: number;
  webhooks: number;
  accepted: number;
  webhooksPerSec: number;
  deliveries: number;
  expectedDeliveries: number;
  /** While posting as fast as CONCURRENCY allows (includes queueing at saturation). */
  latencyMs: { p50: number; p99: number; max: number };
  /** At a steady PACED_RATE, well below saturation. */
  pacedLatencyMs: { ratePerSec: number; p50: number; p99: number; max: number };
  connectSec: number;
  relayMemory: {
    idleMiB: number;
    with1000ClientsMiB: number;
    afterLoadRssMiB: number;
    peakMiB: number;
  };
}

async function benchBackend(backend: 'memory' | 'redis'): Promise<BackendResult> {
  const service = await startTokenService(new Set([TOKEN]));
  const redis = backend === 'redis' ? await startRedis() : undefined;
  const relay = await startRelayProcess({
    RELAY_TENANT_ACME_SECRETS: SECRET,
    RELAY_TENANT_ACME_BASE_URL: service.baseUrl,
    ...(redis ? { RELAY_REDIS_URL: redis.url } : { RELAY_STORAGE: 'memory' }),
  }).catch(async (err: unknown) => {
    // Leave no redis-server behind (a child process outlives this one).
    await redis?.stop();
    await service.close();
    throw err;
  });
  const sockets: WebSocket[] = [];
  try {
    const idle = memoryOf(relay.child.pid!);
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const pacedLatencies: number[] = [];
    let deliveries = 0;
    const wsUrl = relay.url.replace(/^http/, 'ws') + relayClientPath('acme');
    const t0 = performance.now();
    for (let i = 0; i < CLIENTS; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, CLIENTS - i) }, (_, j) => {
          const ext = String(100 + ((i + j) % EXTENSIONS));
          return new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(wsUrl, {
              headers: { Authorization: `Bearer ${TOKEN}` },
              perMessageDeflate: false,
            });
            sockets.push(ws);
            ws.on('message', (data) => {
              const text = data.toString();
              if (text.startsWith('relay ')) {
                if (decodeControl(text)?.type === 'ready') resolve();
                return;
              }
              const at = performance.now();
              const m = /"event_id":"([^"]+)"/.exec(text);
              const sent = m ? sentAt.get(m[1]!) : undefined;
              if (sent !== undefined)
                (m![1]!.includes('paced') ? pacedLatencies : latencies).push(at - sent);
              deliveries++;
            });
            ws.once('open', () =>
              ws.send(
                JSON.stringify({
                  type: 'hello',
                  v: 1,
                  filter: { extensions: [ext], dids: [], events: [] },
                  cursor: null,
                }),
              ),
            );
            ws.once('error', reject);
          });
        }),
      );
    }
    const connectSec = (performance.now() - t0) / 1000;
    const withClients = memoryOf(relay.child.pid!);

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const url = new URL(relay.url + '/webhook/acme');
    const post = (i: number, phase = 'load') =>
      new Promise<number>((resolve) => {
        const eventId = `bench-${backend}-${phase}-${i}`;
        const body = JSON.stringify({
          event: 30011,
          timestamp: Date.now(),
          tenant: 'acme',
          data: {
            call_id: `c${i}`,
            from: '+14155550123',
            to: String(100 + (i % EXTENSIONS)),
            state: 'ringing',
          },
          event_id: eventId,
        });
        const req = http.request(
          url,
          {
            method: 'POST',
            agent,
            headers: {
              'Content-Type': 'application/json',
              'Content-Length': Buffer.byteLength(body),
              'X-Service-Signature': signBody(SECRET, body),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', () => resolve(0));
        sentAt.set(eventId, performance.now());
        req.end(body);
      });
    let next = 0;
    let accepted = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < WEBHOOKS) {
          const status = await post(next++);
          if (status === 200) accepted++;
        }
      }),
    );
    const elapsed = (performance.now() - start) / 1000;
    const expected = accepted * (CLIENTS / EXTENSIONS);
    const deadline = Date.now() + 20_000;
    while (deliveries < expected && Date.now() < deadline) await sleep(20);
    // Latency off saturation: PACED_COUNT webhooks at PACED_RATE per second.
    const pacedStart = performance.now();
    const paced: Promise<number>[] = [];
    for (let i = 0; i < PACED_COUNT; i++) {
      const due = pacedStart + (i * 1000) / PACED_RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      paced.push(post(i, 'paced'));
    }
    const pacedAccepted = (await Promise.all(paced)).filter((s) => s === 200).length;
    const expectedAll = expected + pacedAccepted * (CLIENTS / EXTENSIONS);
    const deadline2 = Date.now() + 20_000;
    while (deliveries < expectedAll && Date.now() < deadline2) await sleep(20);
    agent.destroy();
    const after = memoryOf(relay.child.pid!);
    latencies.sort((a, b) => a - b);
    pacedLatencies.sort((a, b) => a - b);
    return {
      backend,
      clients: CLIENTS,
      fanOutK: CLIENTS / EXTENSIONS,
      webhooks: WEBHOOKS,
      accepted,
      webhooksPerSec: Math.round(accepted / elapsed),
      deliveries,
      expectedDeliveries: expectedAll,
      latencyMs: {
        p50: round(pct(latencies, 50), 2),
        p99: round(pct(latencies, 99), 2),
        max: round(latencies.at(-1) ?? NaN, 2),
      },
      pacedLatencyMs: {
        ratePerSec: PACED_RATE,
        p50: round(pct(pacedLatencies, 50), 2),
        p99: round(pct(pacedLatencies, 99), 2),
        max: round(pacedLatencies.at(-1) ?? NaN, 2),
      },
      connectSec: round(connectSec, 2),
      relayMemory: {
        idleMiB: idle.rssMiB,
        with1000ClientsMiB: withClients.rssMiB,
        afterLoadRssMiB: after.rssMiB,
        peakMiB: after.hwmMiB,
      },
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await relay.stop();
    await redis?.stop();
    await service.close();
  }
}

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
    ...defaultConfig(),
    port: 0,
    tenants: { [sim.tenant]: { baseUrl: sim.baseUrl, secrets: [SECRET] } },
  };
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
  sim.addWebhook({ url: relay.webhookUrl(sim.tenant), secret: SECRET });
  const tokens = new TokenManager({
    client: new ServiceClient({ baseUrl: sim.baseUrl, clock: systemClock }),
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
  });
  let faultAt = 0;
  const relaySource = new RelayEventSource({
    relayUrl: relay.url,
    tenant: sim.tenant,
    tokens,
    filter: relayFilterFor(USER),
    clock: systemClock,
    backoff: { baseMs: 200, capMs: 1000 },
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
  // BENCH_ONLY=throughput|gap runs one part (for development); the default runs both.
  const only = process.env.BENCH_ONLY;
  const backends: BackendResult[] = [];
  if (only !== 'gap')
    for (const b of ['memory', 'redis'] as const) backends.push(await benchBackend(b));
  const gaps: GapResult[] = [];
  if (only !== 'throughput')
    for (const fault of ['close', 'stall'] as const)
      for (const strategy of [
        'hot-standby',
        'switch-on-failure',
        'switch-on-failure+time-cursor',
      ] as const)
        gaps.push(await gapRun(strategy, fault));

  const lines: string[] = [];
  lines.push(
    `relay throughput: ${CLIENTS} clients, each event to K=${CLIENTS / EXTENSIONS} clients, ${WEBHOOKS} webhooks, concurrency ${CONCURRENCY}`,
  );
  lines.push(
    `backend  accepted/s  delivered/expected  saturated p50/p99/max (ms)  at ${PACED_RATE}/s p50/p99/max (ms)  relay RSS idle/+clients/after/peak (MiB)  connect (s)`,
  );
  for (const b of backends) {
    const cols = [
      b.backend.padEnd(8),
      String(b.webhooksPerSec).padStart(10),
      `${b.deliveries}/${b.expectedDeliveries}`.padStart(18),
      `${b.latencyMs.p50} / ${b.latencyMs.p99} / ${b.latencyMs.max}`.padStart(26),
      `${b.pacedLatencyMs.p50} / ${b.pacedLatencyMs.p99} / ${b.pacedLatencyMs.max}`.padStart(28),
      `${b.relayMemory.idleMiB} / ${b.relayMemory.with1000ClientsMiB} / ${b.relayMemory.afterLoadRssMiB} / ${b.relayMemory.peakMiB}`.padStart(
        40,
      ),
      String(b.connectSec).padStart(11),
    ];
    lines.push(cols.join('  '));
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
    lines.join('\n') + '\n\n' + JSON.stringify({ backends, gaps }, null, 2) + '\n',
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:relay failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
