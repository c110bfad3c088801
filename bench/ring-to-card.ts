/**
 * Measures ring -> card: from the simulator writing a 30011 "ringing" frame (Simulator.onSent) to
 * the popup view receiving the card, through the real AppRuntime (WebSocket source, pipeline,
 * presenter) on 127.0.0.1. Prints JSON and a table; asserts nothing.
 * Run: npm run bench:ring-to-card -- [rings]
 */
import { serviceConnectionFactory } from '../src-main/core/connection/connection.ts';
import { HistoryStore } from '../src-main/core/history/history-store.ts';
import { AppRuntime } from '../src-main/core/app/runtime.ts';
import type { CallCard } from '../src-main/ipc/contract.ts';
import { systemClock } from '../src-shared/process/clock.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../src-shared/process/log.ts';
import { startSimulator } from '../src-sim/index.ts';
import {
  FakeClipboard,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  FakeTray,
  MemorySettings,
} from '../rigs/app-harness.ts';
import { directTransport } from '../rigs/direct-transport.ts';

const rings = Number(process.argv[2] ?? 200);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sim = await startSimulator({ extensions: 20 });
const credentials = new MemoryCredentialStore();
await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), sim.apiKey.secret);
const sentAt = new Map<string, number>();
sim.onSent((envelope) => {
  const data = envelope.data as { call_id?: string; state?: string };
  if (data.state === 'ringing' && data.call_id && !sentAt.has(data.call_id))
    sentAt.set(data.call_id, performance.now());
});
const latencies: number[] = [];
class TimedPopup extends FakePopup {
  override show(cards: CallCard[]): void {
    super.show(cards);
    for (const c of cards) {
      const t = sentAt.get(c.callId);
      if (t === undefined) continue;
      latencies.push(performance.now() - t);
      sentAt.delete(c.callId);
    }
  }
}
const secrets = new SecretRegistry();
const runtime = new AppRuntime({
  clock: systemClock,
  logger: silentLogger,
  secrets,
  settings: new MemorySettings({
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey.key,
    extensions: ['101'],
    popupLingerSec: 0,
  }),
  credentials,
  history: new HistoryStore({
    path: 'mem',
    clock: systemClock,
    logger: silentLogger,
    limit: 10_000,
    write: async () => {},
  }),
  views: {
    notifier: new FakeNotifier(),
    popup: new TimedPopup(),
    urlOpener: new FakeOpener(),
    clipboard: new FakeClipboard(),
    tray: new FakeTray(),
  },
  connect: serviceConnectionFactory({
    clock: systemClock,
    logger: silentLogger,
    secrets,
    transport: () => directTransport({ secrets }),
  }),
  startDemo: () => Promise.reject(new Error('no demo here')),
  createProbe: () => {
    throw new Error('no probe here');
  },
});
await runtime.start();
for (let i = 0; runtime.status().state !== 'connected' && i < 500; i++) await sleep(20);
await sleep(200);
for (let i = 0; i < rings; i++) {
  const callId = sim.ring({ from: '+14155550123', to: '101' });
  await sleep(5);
  sim.setCallState(callId, 'ended');
  await sleep(5);
}
await sleep(300);
latencies.sort((a, b) => a - b);
const q = (p: number) =>
  Number(
    (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(2),
  );
const result = {
  rings,
  popped: latencies.length,
  p50_ms: q(0.5),
  p95_ms: q(0.95),
  p99_ms: q(0.99),
  max_ms: q(1),
};
console.log(JSON.stringify(result));
console.table(result);
await runtime.shutdown();
await sim.close();
