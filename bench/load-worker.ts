/**
 * One process of bench/relay.ts's multi-process load generator (BENCH_ONLY=floor): holds a share of
 * the clients (ws-load-client.ts) so that no single event loop at 100 % of a core adds its own
 * queueing to the latencies measured. Driven over the IPC channel (fork, advanced serialization):
 *   {connect: {url, hello, tokens: string[]}} -> {connected: n}
 *   {start: {atMs, rate, webhooks}}           (atMs: the due time of webhook 0, timeOrigin + now)
 *   {report: true}                             -> {received: n, latencies: Float64Array}
 * Latency is measured from each webhook's due time (atMs + n * 1000 / rate), so a generator that
 * falls behind cannot hide it. The process exits when its parent disconnects.
 */
import { loadClient } from './ws-load-client.ts';

interface ConnectMsg {
  connect: { url: string; hello: object; tokens: string[] };
}
interface StartMsg {
  start: { atMs: number; rate: number; webhooks: number };
}

const clients: { close(): void }[] = [];
let latencies = new Float64Array(0);
let received = 0;
let due = (_n: number) => NaN;
const now = () => performance.timeOrigin + performance.now();

process.on('message', (msg: ConnectMsg | StartMsg | { report: true }) => {
  if ('connect' in msg) void connect(msg.connect);
  else if ('start' in msg) {
    const { atMs, rate, webhooks } = msg.start;
    latencies = new Float64Array(webhooks * clients.length);
    received = 0;
    due = (n) => atMs + (n * 1000) / rate;
  } else process.send!({ received, latencies: latencies.subarray(0, received) });
});
process.on('disconnect', () => {
  for (const c of clients) c.close();
  process.exit(0);
});

async function connect(o: ConnectMsg['connect']): Promise<void> {
  for (let i = 0; i < o.tokens.length; i += 50) {
    const batch = await Promise.all(
      o.tokens.slice(i, i + 50).map((token) =>
        loadClient({
          url: o.url,
          token,
          hello: o.hello,
          onControl: () => {},
          onEvent: (n) => {
            if (received < latencies.length) latencies[received] = now() - due(n);
            received++;
          },
        }).catch(() => null),
      ),
    );
    for (const c of batch) if (c) clients.push(c);
  }
  process.send!({ connected: clients.length });
}
