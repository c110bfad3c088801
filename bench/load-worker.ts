/**
 * One process of bench/relay.ts's multi-process load generator (BENCH_ONLY=floor): holds a share of
 * the clients so that no single event loop at 100 % of a core adds its own queueing to the
 * latencies measured. WebSocket clients (ws-load-client.ts) for the relay and its floor, or
 * Server-Sent Events clients (sse-load-client.ts) for smee.io. Driven over the IPC channel (fork,
 * advanced serialization):
 *   {connect: {kind, url, hello, tokens: string[]}} -> {connected: n}   (one client per token)
 *   {start: {atMs, rate, webhooks}}  (atMs: the due time of webhook 0 on monotonicMs(), below)
 *   {report: true} -> {received, latencies: Float64Array, events: Uint32Array, cpuMs, spanMs, elu}
 * Latency is measured from each webhook's due time (atMs + n * 1000 / rate), so a generator that
 * falls behind cannot hide it; `events` gives each receipt's webhook number, so that the parent can
 * also take the latency from the moment the webhook was actually sent. So that the report shows
 * whether this process was itself a bottleneck, it gives the CPU it used and its event loop's
 * utilization from the start to its last expected receipt (or to the report, if some never came).
 * The process exits when its parent disconnects.
 */
import { loadClient } from './ws-load-client.ts';
import { sseLoadClient } from './sse-load-client.ts';
import { monotonicMs } from './monotonic.ts';

interface ConnectMsg {
  connect: { kind: 'ws' | 'sse'; url: string; hello: object; tokens: string[] };
}
interface StartMsg {
  start: { atMs: number; rate: number; webhooks: number };
}

const clients: { close(): void }[] = [];
let latencies = new Float64Array(0);
let events = new Uint32Array(0);
let received = 0;
let due = (_n: number) => NaN;
const now = monotonicMs;

/** What the process used from the start message to its last expected receipt. */
let startedAt = 0;
let cpu0 = process.cpuUsage();
let elu0 = performance.eventLoopUtilization();
let finished: { cpuMs: number; spanMs: number; elu: number } | null = null;
const usage = () => ({
  cpuMs: (() => {
    const c = process.cpuUsage(cpu0);
    return (c.user + c.system) / 1000;
  })(),
  spanMs: now() - startedAt,
  elu: performance.eventLoopUtilization(elu0).utilization,
});

function onEvent(n: number): void {
  if (received < latencies.length) {
    latencies[received] = now() - due(n);
    events[received] = n;
  }
  if (++received === latencies.length) finished = usage();
}

process.on('message', (msg: ConnectMsg | StartMsg | { report: true }) => {
  if ('connect' in msg) void connect(msg.connect);
  else if ('start' in msg) {
    const { atMs, rate, webhooks } = msg.start;
    latencies = new Float64Array(webhooks * clients.length);
    events = new Uint32Array(latencies.length);
    received = 0;
    finished = null;
    due = (n) => atMs + (n * 1000) / rate;
    startedAt = now();
    cpu0 = process.cpuUsage();
    elu0 = performance.eventLoopUtilization();
  } else
    process.send!({
      received,
      latencies: latencies.subarray(0, received),
      events: events.subarray(0, received),
      ...(finished ?? usage()),
    });
});
process.on('disconnect', () => {
  for (const c of clients) c.close();
  process.exit(0);
});

async function connect(o: ConnectMsg['connect']): Promise<void> {
  for (let i = 0; i < o.tokens.length; i += 50) {
    const batch = await Promise.all(
      o.tokens
        .slice(i, i + 50)
        .map((token) =>
          (o.kind === 'sse'
            ? sseLoadClient({ url: o.url, onEvent })
            : loadClient({ url: o.url, token, hello: o.hello, onControl: () => {}, onEvent })
          ).catch(() => null),
        ),
    );
    for (const c of batch) if (c) clients.push(c);
  }
  process.send!({ connected: clients.length });
}
