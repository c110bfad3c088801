/**
 * Measures the call log (issue 39, src-main/core/call-log/): (1) what queueing a call costs the
 * caller of `log()` (one atomic file write: temporary file, fsync, rename, folder fsync), p50/p99
 * per call with the worker held back; (2) calls logged per second by the queue into the fake
 * HubSpot (rigs/fake-hubspot.ts in a process of its own, bench/fake-hubspot-server.ts, HTTPS on
 * 127.0.0.1 through the app's transport, answering after a delay), from the first `log()` to the
 * last call in HubSpot. Prints JSON and a table; asserts nothing.
 * Run: npm run bench:crm-log -- [calls=200] [hubspot delay ms=20]
 * Not measured here: ring-to-card with logging on (the runtime's logging arrives with the call
 * model of issue 39; bench:ring-to-card then measures it).
 * Needs openssl (for the test CA), like the tests that use it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallLogQueue, type CallLogWriter } from '../src-main/core/call-log/queue.ts';
import { HubSpotCallWriter } from '../src-main/core/call-log/hubspot-calls.ts';
import { percentile } from '../src-main/core/crm/lookup.ts';
import { transportFor } from '../src-main/core/net/network.ts';
import type { CallLogRecord } from '../src-main/core/ports/call-log.ts';
import { systemClock } from '../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../src-shared/process/log.ts';
import { makeTestCa } from '../rigs/certs.ts';

const calls = Number(process.argv[2] ?? 200);
const delayMs = Number(process.argv[3] ?? 20);
const TOKEN = 'pat-na1-bench-log';

const dir = mkdtempSync(join(tmpdir(), 'bench-crm-log-'));
const ca = makeTestCa(dir);
const cert = ca.issue('hubspot');
const configFile = join(dir, 'hubspot.json');
writeFileSync(
  configFile,
  JSON.stringify({
    certFile: cert.certFile,
    keyFile: cert.keyFile,
    token: TOKEN,
    delayMs,
    contacts: [],
    writes: true,
  }),
);
const server = spawn(
  process.execPath,
  [join(import.meta.dirname, 'fake-hubspot-server.ts'), configFile],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const hubspotUrl = await new Promise<string>((resolve, reject) => {
  createInterface({ input: server.stdout }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`the fake HubSpot exited (${code})`)));
});

const record = (run: string, i: number): CallLogRecord => ({
  callId: `${run}-${i}`,
  direction: 'inbound',
  from: `+1415555${String(1000 + (i % 9000))}`,
  to: '+14155550100',
  extension: '101',
  startedAt: Date.now() - 120_000,
  answeredAt: Date.now() - 115_000,
  endedAt: Date.now(),
  durationMs: 115_000,
  outcome: 'answered',
  note: 'A note of a typical length: wants a quote for twelve seats, call back on Monday.',
});

// (1) The cost of queueing: the worker never finishes its first call, so log() is the write alone.
const held: CallLogWriter = {
  kind: 'hubspot',
  create: () => new Promise<string>(() => {}),
  update: () => new Promise<void>(() => {}),
  find: () => Promise.resolve(null),
};
const writeQueue = new CallLogQueue({
  folder: join(dir, 'write-cost'),
  writer: held,
  clock: systemClock,
  logger: silentLogger,
});
await writeQueue.start();
const writeMs: number[] = [];
for (let i = 0; i < calls; i++) {
  const t = performance.now();
  await writeQueue.log(record('w', i));
  writeMs.push(performance.now() - t);
}
writeQueue.close();

// (2) Throughput into the fake HubSpot.
const secrets = new SecretRegistry();
const transport = transportFor(
  { proxyMode: 'none', proxyUrl: '', caFile: ca.caFile },
  { logger: silentLogger, secrets, readFile: (p) => readFileSync(p, 'utf8') },
);
let loggedCount = 0;
let allLogged: () => void = () => {};
const done = new Promise<void>((resolve) => (allLogged = resolve));
const queue = new CallLogQueue({
  folder: join(dir, 'throughput'),
  writer: new HubSpotCallWriter({
    fetch: transport.fetch,
    clock: systemClock,
    secrets,
    token: async () => TOKEN,
    apiBase: hubspotUrl,
  }),
  clock: systemClock,
  logger: silentLogger,
  onLogged: () => {
    if (++loggedCount === calls) allLogged();
  },
});
await queue.start();
const started = performance.now();
for (let i = 0; i < calls; i++) await queue.log(record('t', i));
const queuedMs = performance.now() - started;
await done;
const elapsedMs = performance.now() - started;
queue.close();
server.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });

const round = (n: number | null) => Math.round((n ?? 0) * 100) / 100;
writeMs.sort((a, b) => a - b);
const result = {
  calls,
  hubspotDelayMs: delayMs,
  queueWriteMs: {
    p50: round(percentile(writeMs, 50)),
    p99: round(percentile(writeMs, 99)),
    max: round(Math.max(...writeMs)),
  },
  throughput: {
    callsPerSecond: round((calls * 1000) / elapsedMs),
    elapsedMs: Math.round(elapsedMs),
    queuedAllMs: Math.round(queuedMs),
  },
};
process.stdout.write(`${JSON.stringify(result)}\n`);
console.table({
  'queue write per call, p50 (ms)': result.queueWriteMs.p50,
  'queue write per call, p99 (ms)': result.queueWriteMs.p99,
  [`calls logged per second (HubSpot at ${delayMs} ms)`]: result.throughput.callsPerSecond,
  'all calls logged after (ms)': result.throughput.elapsedMs,
});
process.exit(0);
