/**
 * `npm run bench:directory`: what indexing the caller-name directory costs a ring. Two loads,
 * each on the real clock with the real Directory and CallPresenter:
 * - a refresh of a Yeastar PBX's company contacts: 20,000 contacts, two numbers each (one in
 *   E.164, one written nationally), as `fetchPbxContacts` hands them over;
 * - the largest contacts file the directory takes (MAX_CONTACTS_BYTES): a CSV export with two
 *   phone columns, 50,000 numbers (MAX_CONTACT_NUMBERS) read, the rest skipped.
 * While each runs, a worker thread plays the network: every RING_EVERY_MS it posts a ring (its
 * send time on the process's monotonic clock), and the main thread hands it to the presenter
 * (`handlePop`) when its event loop gets to it; a ring's delay is from the post to the
 * notification being raised (FakeNotifier.show). The longest block of the event loop is the
 * longest gap between the firings of a 1 ms timer. Also: how long the load took to the
 * finished index, and how long reading (decoding and parsing) the file alone takes.
 * Prints JSON and a table; asserts nothing. BENCH_DIRECTORY_RUNS=<n> repeats each load (default 3).
 */
import { Worker } from 'node:worker_threads';
import { CallPresenter } from '../src-main/core/presenters/call-presenter.ts';
import { Directory } from '../src-main/core/contacts/directory.ts';
import {
  MAX_CONTACTS_BYTES,
  MAX_CONTACT_NUMBERS,
  readContacts,
} from '../src-main/core/contacts/contacts-file.ts';
import type { PbxContact } from '../src-shared/api/pbx-lists.ts';
import { systemClock } from '../src-shared/process/clock.ts';
import { silentLogger } from '../src-shared/process/log.ts';
import {
  FakeClipboard,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  memoryHistory,
} from '../rigs/app-harness.ts';
import { monotonicMs } from './monotonic.ts';

const RUNS = Number(process.env.BENCH_DIRECTORY_RUNS ?? 3);
const RING_EVERY_MS = 5;
const COMPANY_CONTACTS = 20_000;

function companyContacts(): PbxContact[] {
  const list: PbxContact[] = [];
  for (let i = 0; i < COMPANY_CONTACTS; i++) {
    const n = String(1_000_000 + i).slice(1);
    list.push({
      name: `Contact ${i}`,
      company: `Company ${i % 500}`,
      numbers: [
        { number: `+1415${String(3_000_000 + i)}`, kind: 'work' },
        { number: `(650) 5${n.slice(0, 2)}-${n.slice(2)}`, kind: 'mobile' },
      ],
    });
  }
  return list;
}

/** A Google-style CSV export at the size cap: name, company, two phones a row. */
function contactsFile(): Uint8Array {
  const rows = [
    'Name,Organization 1 - Name,Phone 1 - Type,Phone 1 - Value,Phone 2 - Type,Phone 2 - Value',
  ];
  let size = rows[0]!.length + 2;
  for (let i = 0; ; i++) {
    const row = `Person ${i},Firm ${i % 700},Mobile,+44 7700 ${String(100_000 + i).slice(-6)},Work,(212) 555-${String(10_000 + (i % 10_000)).slice(1)}`;
    if (size + row.length + 2 > MAX_CONTACTS_BYTES) break;
    rows.push(row);
    size += row.length + 2;
  }
  return new TextEncoder().encode(rows.join('\r\n') + '\r\n');
}

const RINGER = `
const { parentPort } = require('node:worker_threads');
const now = () => Number(process.hrtime.bigint()) / 1e6;
let timer;
parentPort.on('message', (m) => {
  if (m === 'start') timer = setInterval(() => parentPort.postMessage(now()), ${RING_EVERY_MS});
  else { clearInterval(timer); parentPort.close(); }
});
`;

interface Figures {
  load: string;
  run: number;
  longestBlockMs: number;
  loadMs: number;
  rings: number;
  ringDelayMaxMs: number;
  ringDelayP50Ms: number;
  /** Rings raised while the load was still running (before the finished index was in use). */
  ringsDuringLoad: number;
  /** The load's name was found for a ring raised after it finished. */
  named: boolean;
}

/**
 * The longest stretch the event loop was busy: a 1 ms timer re-armed each time it fires; the
 * longest gap between two firings, less the 1 ms asked for. (Node's monitorEventLoopDelay missed
 * a block that began before its first sample.)
 */
function watchLoop(): { stop(): number } {
  let last = monotonicMs();
  let longest = 0;
  let timer: NodeJS.Timeout;
  const tick = () => {
    const now = monotonicMs();
    longest = Math.max(longest, now - last - 1);
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return {
    stop() {
      clearTimeout(timer);
      return Math.max(longest, monotonicMs() - last - 1);
    },
  };
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function measure(
  load: string,
  run: number,
  probe: string,
  work: (directory: Directory) => Promise<unknown>,
  list: PbxContact[],
  file: Uint8Array,
): Promise<Figures> {
  const directory = new Directory({
    clock: systemClock,
    logger: silentLogger,
    fetchExtensions: async () => [],
    fetchPbxContacts: async () => list,
    defaultRegion: 'US',
    readFile: async () => file,
  });
  const notifier = new FakeNotifier();
  const presenter = new CallPresenter({
    clock: systemClock,
    logger: silentLogger,
    directory,
    history: memoryHistory(systemClock),
    notifier,
    popup: new FakePopup(),
    urlOpener: new FakeOpener(),
    clipboard: new FakeClipboard(),
    settings: () => ({
      doNotDisturb: false,
      sound: false,
      autoOpenCrm: false,
      crmUrlTemplate: '',
      crmAllowedSchemes: ['https'],
      popupLingerSec: 0,
    }),
  });
  const delays: number[] = [];
  let loading = true;
  let ringsDuringLoad = 0;
  let seq = 0;
  const ringer = new Worker(RINGER, { eval: true });
  ringer.on('message', (sentAt: number) => {
    const callId = `c${++seq}`;
    presenter.handlePop({
      callId,
      from: '+14155550123',
      to: '101',
      eventId: callId,
      timestamp: systemClock.now(),
      receivedAt: systemClock.now(),
      source: 'direct',
    });
    delays.push(monotonicMs() - sentAt);
    if (loading) ringsDuringLoad++;
    presenter.handleDismiss({ callId, state: 'hangup', eventId: `${callId}-end`, to: '101' });
  });
  await new Promise((resolve) => ringer.once('online', resolve));
  ringer.postMessage('start');
  await new Promise((resolve) => setTimeout(resolve, 50)); // rings already flowing
  delays.length = 0;
  ringsDuringLoad = 0;
  const loop = watchLoop();
  const started = monotonicMs();
  await work(directory);
  // The load is over when its names are in use.
  while (directory.identify(probe) === null) await new Promise((r) => setTimeout(r, 1));
  const loadMs = monotonicMs() - started;
  loading = false;
  await new Promise((resolve) => setTimeout(resolve, 30));
  const longestBlockMs = loop.stop();
  ringer.postMessage('stop');
  await new Promise((resolve) => ringer.once('exit', resolve));
  directory.stop();
  const sorted = [...delays].sort((a, b) => a - b);
  return {
    load,
    run,
    longestBlockMs: round(longestBlockMs),
    loadMs: round(loadMs),
    rings: delays.length,
    ringDelayMaxMs: round(sorted.at(-1) ?? 0),
    ringDelayP50Ms: round(quantile(sorted, 0.5)),
    ringsDuringLoad,
    named: directory.identify(probe) !== null,
  };
}

const round = (ms: number) => Math.round(ms * 10) / 10;

const list = companyContacts();
const file = contactsFile();
const parseStarted = monotonicMs();
const reading = readContacts(file);
const parseMs = round(monotonicMs() - parseStarted);
const fileNumbers = reading.contacts.reduce((n, c) => n + c.numbers.length, 0);

const results: Figures[] = [];
for (let run = 1; run <= RUNS; run++) {
  results.push(
    await measure(
      'company contacts (20,000)',
      run,
      '+14153019999',
      (d) => d.refreshNow(),
      list,
      file,
    ),
  );
  results.push(
    await measure(
      `contacts file (${(file.length / 1024 / 1024).toFixed(2)} MiB)`,
      run,
      '+447700100000',
      (d) => d.loadContactsFile('/contacts.csv'),
      list,
      file,
    ),
  );
}

console.log(
  JSON.stringify(
    {
      ringEveryMs: RING_EVERY_MS,
      companyContacts: COMPANY_CONTACTS,
      companyNumbers: list.reduce((n, c) => n + c.numbers.length, 0),
      fileBytes: file.length,
      fileNumbers,
      maxFileNumbers: MAX_CONTACT_NUMBERS,
      fileReadAloneMs: parseMs,
      results,
    },
    null,
    2,
  ),
);
console.log(
  `\n${'load'.padEnd(28)} run  longest block  load to index  rings  during  ring delay max  p50`,
);
for (const r of results)
  console.log(
    `${r.load.padEnd(28)} ${String(r.run).padStart(3)}  ${r.longestBlockMs.toFixed(1).padStart(10)} ms  ${r.loadMs.toFixed(1).padStart(10)} ms  ${String(r.rings).padStart(5)}  ${String(r.ringsDuringLoad).padStart(6)}  ${r.ringDelayMaxMs.toFixed(1).padStart(11)} ms  ${r.ringDelayP50Ms.toFixed(1).padStart(4)} ms`,
  );
console.log(
  `\nreading (decoding and parsing) the file alone: ${parseMs} ms, ${fileNumbers} numbers`,
);
