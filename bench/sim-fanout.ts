/**
 * Fan-out figures for the simulator's hot path: traffic at a given rate to N subscribed sockets,
 * measuring delivered frames and the time from `onSent` to the client's receipt. Prints JSON and a
 * table. Clients run in the same process, so the CPU figure covers both sides.
 *
 *   npm exec -- node bench/sim-fanout.ts [--rate 2000] [--sockets 20] [--seconds 5] [--webhook]
 *
 * --webhook also delivers every event to a local receiver (answering 204) and counts deliveries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { startSimulator } from '../src-sim/index.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    sockets: { type: 'string' },
    seconds: { type: 'string' },
    webhook: { type: 'boolean' },
  },
});
const rate = Number(values.rate ?? 2000);
const socketCount = Number(values.sockets ?? 20);
const seconds = Number(values.seconds ?? 5);

const sim = await startSimulator({ extensions: 500, seed: 1, control: false });
const tokenRes = await fetch(`${sim.baseUrl}/openapi/v1.0/get_token`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ username: sim.apiKey.key, password: sim.apiKey.secret }),
});
const { access_token } = (await tokenRes.json()) as { access_token: string };

let hooksReceived = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hooksReceived++;
    res.writeHead(204).end();
  });
});
if (values.webhook) {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  sim.addWebhook({
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    secret: 'bench-secret',
  });
}

const sentAt = new Map<string, number>();
sim.onSent((envelope) => sentAt.set(envelope.event_id, performance.now()));
const latencies: number[] = [];
let received = 0;
const sockets: WebSocket[] = [];
for (let i = 0; i < socketCount; i++) {
  const ws = new WebSocket(`${sim.baseUrl.replace('http', 'ws')}/openapi/v1.0/subscribe`, {
    headers: { Authorization: `Bearer ${access_token}` },
  });
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ topic_list: [30011] }));
  await new Promise((r) => ws.once('message', r));
  ws.on('message', (data) => {
    const now = performance.now();
    received++;
    const id = /"event_id":"([^"]+)"/.exec(data.toString())?.[1];
    const t = id ? sentAt.get(id) : undefined;
    if (t !== undefined) latencies.push(now - t);
  });
  sockets.push(ws);
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
sim.startTraffic({ ratePerSec: rate });
await new Promise((r) => setTimeout(r, seconds * 1000));
sim.stopTraffic();
const elapsed = (performance.now() - t0) / 1000;
await new Promise((r) => setTimeout(r, 500));
const cpu = process.cpuUsage(cpu0);
const emitted = sim.stats().eventsSent;

latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
const result = {
  rate,
  sockets: socketCount,
  seconds: Number(elapsed.toFixed(2)),
  eventsEmitted: emitted,
  eventsPerSec: Math.round(emitted / elapsed),
  framesReceived: received,
  framesExpected: emitted * socketCount,
  latencyMs: {
    p50: +pct(0.5).toFixed(3),
    p95: +pct(0.95).toFixed(3),
    p99: +pct(0.99).toFixed(3),
    max: +pct(1).toFixed(3),
  },
  webhookDeliveries: values.webhook ? hooksReceived : null,
  webhookPendingAtEnd: values.webhook ? sim.stats().webhookPending : null,
  cpuPercentOfOneCore: Math.round(((cpu.user + cpu.system) / 1000 / (elapsed * 1000 + 500)) * 100),
};
console.log(JSON.stringify(result));
console.table({
  'events/s emitted': result.eventsPerSec,
  'frames received / expected': `${received} / ${result.framesExpected}`,
  'latency p50 ms': result.latencyMs.p50,
  'latency p95 ms': result.latencyMs.p95,
  'latency p99 ms': result.latencyMs.p99,
  'webhook deliveries (pending at end)': values.webhook
    ? `${hooksReceived} (${result.webhookPendingAtEnd})`
    : 'off',
  'cpu % of one core (sim + clients)': result.cpuPercentOfOneCore,
});
for (const ws of sockets) ws.terminate();
await sim.close();
receiver.closeAllConnections();
receiver.close();
