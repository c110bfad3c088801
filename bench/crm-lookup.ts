/**
 * Measures the CRM lookup end to end: the simulator rings (a 30011 "ringing" frame), the real
 * AppRuntime pops the card, asks the fake HubSpot (test/support/fake-hubspot.ts in a process of
 * its own, bench/fake-hubspot-server.ts: HTTPS on 127.0.0.1 through the app's transport, trusting
 * a test CA) and fills the card in. Prints, per
 * call, ring -> card (which the lookup must not delay) and ring -> enriched card, p50/p99, and the
 * lookup's own latency as the diagnostics report it. Prints JSON and a table; asserts nothing.
 * Run: npm run bench:crm-lookup -- [rings=100] [hubspot delay ms=20] [off]
 * `off`: the same run with the lookup turned off (the fake HubSpot still up), for ring -> card
 * without it.
 * Needs openssl (for the test CA), like the tests that use it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceConnectionFactory } from '../src-main/core/connection/connection.ts';
import { HistoryStore } from '../src-main/core/history/history-store.ts';
import { AppRuntime } from '../src-main/core/app/runtime.ts';
import { crmKeychainAccount } from '../src-main/core/crm/build.ts';
import { percentile } from '../src-main/core/crm/lookup.ts';
import { transportFor } from '../src-main/core/net/network.ts';
import { DEFAULT_SETTINGS } from '../src-main/core/settings/types.ts';
import type { CallCard } from '../src-main/ipc/contract.ts';
import { systemClock } from '../src-shared/process/clock.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../src-shared/process/log.ts';
import { startSimulator } from '../src-sim/index.ts';
import { makeTestCa } from '../rigs/certs.ts';
import { directTransport } from '../rigs/direct-transport.ts';
import {
  FakeClipboard,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  FakeTray,
  MemorySettings,
} from '../rigs/app-harness.ts';

const rings = Number(process.argv[2] ?? 100);
const delayMs = Number(process.argv[3] ?? 20);
const lookupOff = process.argv[4] === 'off';
const TOKEN = 'pat-na1-bench';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'bench-crm-'));
const ca = makeTestCa(dir);
const cert = ca.issue('hubspot');
const numbers = Array.from(
  { length: rings },
  (_, i) => `+1415555${String(1000 + i).padStart(4, '0')}`,
);
// The fake HubSpot in a process of its own: a real one is on another machine.
const configFile = join(dir, 'hubspot.json');
writeFileSync(
  configFile,
  JSON.stringify({
    certFile: cert.certFile,
    keyFile: cert.keyFile,
    token: TOKEN,
    delayMs,
    contacts: numbers.map((phone, i) => ({
      firstname: `Caller${i}`,
      lastname: 'Bench',
      company: 'Bench Co',
      phone,
    })),
  }),
);
const server = spawn(
  process.execPath,
  [join(import.meta.dirname, 'fake-hubspot-server.ts'), configFile],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const hubspotUrl = await new Promise<string>((resolve, reject) => {
  createInterface({ input: server.stdout }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`the fake HubSpot exited (${code})`)));
});

const sim = await startSimulator({ extensions: 20 });
const crmLookup = {
  ...DEFAULT_SETTINGS.crmLookup,
  provider: lookupOff ? ('none' as const) : ('hubspot' as const),
};
const credentials = new MemoryCredentialStore();
await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), sim.apiKey.secret);
await credentials.setSecret(
  crmKeychainAccount({ ...crmLookup, provider: 'hubspot' }, hubspotUrl) ?? '',
  TOKEN,
);

const sentAt = new Map<string, number>();
sim.onSent((envelope) => {
  const data = envelope.data as { call_id?: string; state?: string };
  if (data.state === 'ringing' && data.call_id && !sentAt.has(data.call_id))
    sentAt.set(data.call_id, performance.now());
});
const toCard: number[] = [];
const toEnriched: number[] = [];
const carded = new Set<string>();
class TimedPopup extends FakePopup {
  override show(cards: CallCard[]): void {
    super.show(cards);
    const now = performance.now();
    for (const c of cards) {
      const t = sentAt.get(c.callId);
      if (t === undefined) continue;
      if (!carded.has(c.callId)) {
        carded.add(c.callId);
        toCard.push(now - t);
      }
      if (c.crmLookup === 'found') {
        toEnriched.push(now - t);
        sentAt.delete(c.callId);
      }
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
    popupLingerSec: 5,
    caFile: ca.caFile,
    proxyMode: 'none',
    crmLookup,
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
  crmNetwork: (s) =>
    transportFor(s, { logger: silentLogger, secrets, readFile: (p) => readFileSync(p, 'utf8') }),
  hubspotApi: hubspotUrl,
});
await runtime.start();
for (let i = 0; runtime.status().state !== 'connected' && i < 500; i++) await sleep(20);
await sleep(200);
for (const from of numbers) {
  const callId = sim.ring({ from, to: '101' });
  await sleep(100);
  sim.setCallState(callId, 'ended');
}
await sleep(1_000);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const ms = (v: number | null) => (v === null ? null : Number(v.toFixed(2)));
const stats = runtime.crmStats();
const result = {
  rings,
  lookup: lookupOff ? 'off' : 'hubspot',
  hubspot_delay_ms: delayMs,
  popped: toCard.length,
  enriched: toEnriched.length,
  ring_to_card_p50_ms: ms(percentile(sorted(toCard), 50)),
  ring_to_card_p99_ms: ms(percentile(sorted(toCard), 99)),
  ring_to_enriched_p50_ms: ms(percentile(sorted(toEnriched), 50)),
  ring_to_enriched_p99_ms: ms(percentile(sorted(toEnriched), 99)),
  lookup_p50_ms: stats?.latencyMs.p50 ?? null,
  lookup_p99_ms: stats?.latencyMs.p99 ?? null,
  failures: JSON.stringify(stats?.failures ?? {}),
};
console.log(JSON.stringify(result));
console.table(result);
await runtime.shutdown();
await sim.close();
server.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
