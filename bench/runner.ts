/**
 * `npm run bench:runner`: what the headless runner costs a machine, run from the TypeScript sources
 * (`npm run headless:dev`: Node strips the types of every file at start) against the build that
 * ships (`npm run headless`, bin/screenpop-headless.js -> dist-headless/, scripts/build-headless.ts).
 * Targets (issue 24): RSS <= 70 MB after 60 s of `--demo`, first status line <= 300 ms.
 *
 * 1. Start: the time from spawn() to the first stdout line (the first `status` line), source and
 *    built alternating, BENCH_STARTS pairs (default 5); each process is stopped after its line.
 * 2. Memory: each variant runs `--demo` for BENCH_SECONDS (default 60); then VmRSS, RssAnon
 *    (heap, malloc) and RssFile (the node binary's pages) from /proc/<pid>/status. BENCH_ROUNDS
 *    rounds (default 3), the order alternating, the two variants of a round side by side (started
 *    one after the other's first line), with a bare Node (`setInterval`) beside them as the floor.
 *
 * Every figure is printed with its command and the load average when it was taken: the machine is
 * shared, so compare the variants of one run, not runs of different days. Prints a table, then JSON.
 *
 * 3. Caches (bench/runner-caches.ts): the plateau of the event-id and call maps on a busy tenant,
 *    in simulated time, and the bytes of each at its full bounds. BENCH_ONLY=caches runs it alone.
 *
 * Before/after in one sitting: BENCH_BASELINE=<another checkout, built> adds its
 * bin/screenpop-headless.js as the variant `baseline`, interleaved with the others (e.g.
 * `git archive <old> | tar -x -C /tmp/old`, node_modules linked, `node scripts/build-headless.ts`
 * there). BENCH_VARIANTS=built,baseline leaves out the others (`source` is the slow one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildHeadless, headlessBuildIsCurrent } from '../scripts/build-headless.ts';
import { cachesBench, printCaches } from './runner-caches.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NODE = process.execPath;
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);

interface Variant {
  name: string;
  /** What a user types. */
  command: string;
  args: string[];
}

const ALL_VARIANTS: Variant[] = [
  {
    name: 'source',
    command: 'npm run headless:dev -- --demo',
    args: ['src-main/headless/cli.ts', '--demo'],
  },
  {
    name: 'built',
    command: 'npm run headless -- --demo',
    args: ['bin/screenpop-headless.js', '--demo'],
  },
];
const BASELINE = process.env.BENCH_BASELINE;
if (BASELINE)
  ALL_VARIANTS.push({
    name: 'baseline',
    command: `node ${BASELINE}/bin/screenpop-headless.js --demo (BENCH_BASELINE)`,
    args: [`${BASELINE}/bin/screenpop-headless.js`, '--demo'],
  });
const CHOSEN = process.env.BENCH_VARIANTS?.split(',');
const VARIANTS = ALL_VARIANTS.filter((v) => !CHOSEN || CHOSEN.includes(v.name));
const BARE: Variant = {
  name: 'bare node',
  command: 'node -e "setInterval(() => {}, 1000)"',
  args: ['-e', 'setInterval(() => {}, 1000)'],
};

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MB = (kB: number) => Math.round(kB / 102.4) / 10;

interface Running {
  child: ChildProcess;
  startedAt: number;
  firstLine: Promise<number>;
}

/** Spawns `variant`; `firstLine` resolves with the ms from spawn to its first stdout line. */
function start(variant: Variant): Running {
  const startedAt = performance.now();
  const child = spawn(NODE, variant.args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  const firstLine = new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', () => resolve(performance.now() - startedAt));
    child.once('exit', (code) =>
      reject(new Error(`${variant.name} exited (${code}) before a line`)),
    );
  });
  firstLine.catch(() => {});
  return { child, startedAt, firstLine };
}

async function stop(run: Running): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  const exited = new Promise((r) => run.child.once('exit', r));
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

interface Memory {
  rssKb: number;
  anonKb: number;
  fileKb: number;
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), anonKb: field('RssAnon'), fileKb: field('RssFile') };
}

interface StartSample {
  variant: string;
  ms: number;
  load: string;
}
interface MemorySample extends Memory {
  variant: string;
  round: number;
  load: string;
}

async function startTimes(): Promise<StartSample[]> {
  const out: StartSample[] = [];
  for (let i = 0; i < STARTS; i++) {
    const order = i % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const variant of order) {
      const run = start(variant);
      const ms = await run.firstLine;
      out.push({ variant: variant.name, ms: Math.round(ms), load: loadAverage() });
      await stop(run);
    }
  }
  return out;
}

/** One round: each variant (and the bare Node) for SECONDS, started one after another's first line. */
async function memoryRound(round: number): Promise<MemorySample[]> {
  const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
  const runs: Array<{ variant: Variant; run: Running }> = [];
  for (const variant of [...order, BARE]) {
    const run = start(variant);
    runs.push({ variant, run });
    if (variant !== BARE) await run.firstLine;
  }
  const samples = await Promise.all(
    runs.map(async ({ variant, run }) => {
      await sleep(Math.max(0, run.startedAt + SECONDS * 1000 - performance.now()));
      const sample = {
        variant: variant.name,
        round,
        load: loadAverage(),
        ...memoryOf(run.child.pid!),
      };
      await stop(run);
      return sample;
    }),
  );
  return samples;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'caches') {
    const load = loadAverage();
    const caches = cachesBench();
    printCaches(caches);
    console.log(`load averages: ${load} -> ${loadAverage()}; node ${process.version}`);
    console.log(JSON.stringify({ caches }));
    return;
  }
  if (!headlessBuildIsCurrent()) {
    process.stderr.write('building the runner (npm run build:headless)…\n');
    await buildHeadless({ quiet: true });
  }
  process.stderr.write(`start times: ${STARTS} pairs (load ${loadAverage()})\n`);
  const starts = await startTimes();
  const memory: MemorySample[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(
      `memory round ${round + 1}/${ROUNDS}: ${SECONDS} s (load ${loadAverage()})\n`,
    );
    memory.push(...(await memoryRound(round)));
  }

  const rows = [...VARIANTS, BARE].map((variant) => {
    const s = starts.filter((x) => x.variant === variant.name);
    const m = memory.filter((x) => x.variant === variant.name);
    return {
      variant: variant.name,
      command: variant.command,
      firstLineMs: s.length
        ? { median: median(s.map((x) => x.ms)), all: s.map((x) => x.ms) }
        : null,
      rssMB: { median: MB(median(m.map((x) => x.rssKb))), all: m.map((x) => MB(x.rssKb)) },
      anonMB: { median: MB(median(m.map((x) => x.anonKb))), all: m.map((x) => MB(x.anonKb)) },
      fileMB: { median: MB(median(m.map((x) => x.fileKb))), all: m.map((x) => MB(x.fileKb)) },
      loads: [...new Set([...s, ...m].map((x) => x.load))],
    };
  });

  console.log(`\nscreenpop-headless --demo: first status line and memory after ${SECONDS} s`);
  console.log(
    `targets: RSS <= 70 MB, first line <= 300 ms; ${STARTS} start pairs, ${ROUNDS} memory rounds`,
  );
  console.log(
    [
      'variant',
      'first line ms (median; all)',
      `RSS MB (median; all)`,
      'anon MB',
      'file MB',
      'command',
    ]
      .map((h, i) => h.padEnd([10, 34, 28, 10, 10, 0][i]!))
      .join(''),
  );
  for (const r of rows) {
    const first = r.firstLineMs ? `${r.firstLineMs.median}; ${r.firstLineMs.all.join(' ')}` : '-';
    console.log(
      [
        r.variant.padEnd(10),
        first.padEnd(34),
        `${r.rssMB.median}; ${r.rssMB.all.join(' ')}`.padEnd(28),
        String(r.anonMB.median).padEnd(10),
        String(r.fileMB.median).padEnd(10),
        r.command,
      ].join(''),
    );
  }
  console.log(
    `load averages while measured: ${[...new Set(rows.flatMap((r) => r.loads))].join(' | ')}`,
  );
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  const cachesLoad = loadAverage();
  const caches = cachesBench();
  printCaches(caches);
  console.log(`load averages (caches): ${cachesLoad} -> ${loadAverage()}`);
  console.log(JSON.stringify({ seconds: SECONDS, starts, memory, rows, caches }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
