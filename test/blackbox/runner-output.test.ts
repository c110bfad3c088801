/**
 * Black box: the built screenpop-headless and relay when the reader of their output goes away, as
 * people pipe them. The readers are real pipes whose reading end this test closes: stdout after the
 * first line (`screenpop-headless --demo | head -1`, a consumer that crashed), stderr at once (a
 * log collector that died). Before src-shared/process/output-stream.ts each was a write error caught by the
 * last resort, logged by a write that failed again, in a loop: stdout gone gave 93 MB of stderr in
 * 10 s at a full core; stderr gone a full core, no pop at all and SIGTERM ignored (the relay:
 * serving nothing, SIGTERM ignored).
 *
 * Bounds that a loaded 2-core machine cannot break for a healthy process: an exit within 10 s (it
 * takes ~0.2 s), stderr under 64 KiB (~2 KiB), CPU under a fifth of a core over 3 s (a healthy
 * `--demo` uses well under 1 %; the loop used a whole core).
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cpuShare,
  ensureRelayBuilt,
  envWithout,
  freePort,
  NODE,
  ProcessGroup,
  RELAY,
  sleep,
  until,
  type Exit,
  type Spawned,
} from '../../rigs/processes.ts';
import { RunnerProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

const plainEnv = () => envWithout(['LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'LANG']);
const MAX_CPU_SHARE = 0.2;
const MAX_STDERR_BYTES = 64 * 1024;

/** Counts every byte the process writes to `stream` (Spawned keeps only the last 64 KiB). */
function byteCounter(stream: Readable | null): () => number {
  let bytes = 0;
  stream?.on('data', (d: Buffer) => (bytes += d.length));
  return () => bytes;
}

/**
 * The exit, or a failure naming what the process did instead within `ms`; once it exited, after
 * the last of its stderr has been read (the exit can be seen before the pipe's last bytes).
 */
async function exitWithin(proc: Spawned, ms: number, detail: () => string): Promise<Exit> {
  const timeout = sleep(ms).then(() => null);
  const exit = await Promise.race([proc.exit, timeout]);
  if (!exit) throw new Error(`still running ${ms} ms later\n${detail()}`);
  const stderr = proc.child.stderr;
  if (stderr && !stderr.closed) await once(stderr, 'close');
  return exit;
}

/** Closes our reading end of the child's stderr: its next write fails with EPIPE. */
function breakStderr(proc: Spawned): void {
  proc.child.stderr?.destroy();
}

describe('screenpop-headless when the reader of its output goes away', () => {
  it(
    'stdout closed after the first line: stops at once, exit 4, one line on stderr saying why, no flood',
    { timeout: 40_000 },
    async () => {
      group = new ProcessGroup();
      const proc = group.spawnRunner('runner | head -1', ['--demo'], { env: plainEnv() });
      const stderrBytes = byteCounter(proc.child.stderr);
      await until(
        () => proc.stdout.length > 0,
        'the first stdout line',
        20_000,
        () => proc.describe(),
      );
      proc.child.stdout?.destroy(); // the reader exits, as `head -1` does
      const detail = () => `stderr: ${stderrBytes()} bytes\n${proc.describe()}`;
      expect(await exitWithin(proc, 10_000, detail)).toEqual({ code: 4, signal: null });
      expect(stderrBytes()).toBeLessThan(MAX_STDERR_BYTES);
      const logged = proc
        .stderr()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { msg: string; code?: string });
      expect(logged.filter((l) => l.msg.startsWith('stdout is gone'))).toEqual([
        expect.objectContaining({ code: 'EPIPE', exitCode: 4 }),
      ]);
      expect(logged.map((l) => l.msg).slice(-2)).toEqual(['stopping', 'stopped']);
      expect(proc.stderr()).not.toContain('last resort');
    },
  );

  it(
    'stdout closed after the first line and stderr broken too: exit 4 all the same',
    { timeout: 40_000 },
    async () => {
      group = new ProcessGroup();
      const proc = group.spawnRunner('runner | head -1 2>broken', ['--demo'], {
        env: plainEnv(),
      });
      breakStderr(proc);
      await until(
        () => proc.stdout.length > 0,
        'the first stdout line',
        20_000,
        () => proc.describe(),
      );
      proc.child.stdout?.destroy();
      expect(await exitWithin(proc, 10_000, () => proc.describe())).toEqual({
        code: 4,
        signal: null,
      });
    },
  );

  it(
    'stderr broken (nobody reads the logs): still pops, CPU stays low, SIGTERM stops it (exit 0)',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      const runner = new RunnerProcess(
        group.spawnRunner('runner 2>broken', ['--demo'], { env: plainEnv() }),
      );
      breakStderr(runner.proc);
      // The demo rings extension 101 every 5 s.
      await runner.waitFor(() => runner.pops().length >= 1, 'a pop', 30_000);
      expect(await cpuShare(runner.proc.pid, 3_000)).toBeLessThan(MAX_CPU_SHARE);
      expect(runner.proc.running()).toBe(true);
      runner.proc.signal('SIGTERM');
      expect(await exitWithin(runner.proc, 10_000, () => runner.explain())).toEqual({
        code: 0,
        signal: null,
      });
      expect(runner.badLines).toEqual([]);
    },
  );
});

describe('screenpop-headless when faults turn into a loop', () => {
  it(
    'a fault that causes the next (nextTick, no signal handled): exit 1 within seconds, the log bounded',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      const trigger = join(group.tempDir('blackbox-fault-loop-'), 'now');
      const runner = new RunnerProcess(
        group.spawnRunner('runner (fault loop injected)', ['--demo'], {
          nodeArgs: ['--import', './test/blackbox/fixtures/inject-fault-loop.ts'],
          env: { ...plainEnv(), INJECT_FAULT_LOOP_FILE: trigger },
        }),
      );
      const stderrBytes = byteCounter(runner.proc.child.stderr);
      await runner.waitForState('connected', 20_000);
      writeFileSync(trigger, '');
      const detail = () => `stderr: ${stderrBytes()} bytes\n${runner.explain()}`;
      expect(await exitWithin(runner.proc, 10_000, detail)).toEqual({ code: 1, signal: null });
      // Ten fault lines with their stacks, then the one saying it is a loop: within a pipe's
      // buffer, so that line is there however slowly the log is read.
      expect(stderrBytes()).toBeLessThan(MAX_STDERR_BYTES);
      const last = JSON.parse(runner.proc.stderr().trim().split('\n').at(-1) ?? '') as object;
      expect(last).toMatchObject({
        msg: 'unexpected errors in a loop; no more are logged',
        faults: 201,
        withinMs: 10_000,
      });
    },
  );
});

describe('the relay when the reader of its log goes away', () => {
  it(
    'stderr broken: serves, CPU stays low, SIGTERM stops it (exit 0)',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      ensureRelayBuilt();
      const port = await freePort();
      const config = join(group.tempDir('blackbox-relay-output-'), 'relay.json');
      writeFileSync(
        config,
        JSON.stringify({
          host: '127.0.0.1',
          port,
          tenants: {
            acme: { baseUrl: 'http://127.0.0.1:9', secrets: ['whsec-blackbox-1-0123456789abcde'] },
          },
        }),
      );
      const relay = group.spawn('relay 2>broken', NODE, [RELAY, '--config', config]);
      breakStderr(relay);
      await until(
        () => relay.stdout.some((l) => l.text.startsWith('relay listening on')),
        'relay listening',
        20_000,
        () => relay.describe(),
        () => !relay.running(),
      );
      // A refused webhook is logged (to the broken stderr); the relay answers on.
      const webhook = await fetch(`http://127.0.0.1:${port}/webhook/acme`, {
        method: 'POST',
        body: '{}',
      });
      expect(webhook.status).toBe(401);
      expect(await cpuShare(relay.pid, 3_000)).toBeLessThan(MAX_CPU_SHARE);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      relay.signal('SIGTERM');
      expect(await exitWithin(relay, 20_000, () => relay.describe())).toEqual({
        code: 0,
        signal: null,
      });
    },
  );
});
