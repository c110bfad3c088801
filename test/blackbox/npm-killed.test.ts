/**
 * Black box: `npm run sim`, `npm run relay` and `npm run -s headless` when npm itself is killed
 * outright (SIGKILL: the OOM killer, `kill -9`, a test harness's cleanup). npm cannot pass anything
 * on, and its `sh -c` lives on under PPID 1, so the program under it sees its own parent unchanged.
 * Before src-shared/process/stop-signal.ts also watched npm's shell's parent, all three kept running (the
 * simulator and relay still holding their ports; seen as a leaked simulator under PPID 1 after
 * commands.test.ts). Each must now stop by itself, cleanly (its "stopped" words), within a bounded
 * time, leaving its port free and nothing behind. Linux only (/proc): see stop-signal.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  alive,
  descendantOf,
  ensureRelayBuilt,
  freePort,
  listening,
  ProcessGroup,
  RELAY,
  RUNNER,
  until,
  type Spawned,
} from '../../rigs/processes.ts';
import { SimProcess, startRunner } from './services.ts';
import { procStat } from '../../src-shared/process/stop-signal.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

/** How long after npm's death each program may take to be gone (its poll is 1 s; the relay drains 1 s). */
const STOP_WITHIN_MS = 8_000;

/**
 * npm -> sh -> program: the program's pid and its shell's, both adopted by the group (killed in
 * cleanup if this test fails, so that no run of it leaves anything behind).
 */
function programUnder(npm: Spawned, script: string): { program: number; shell: number } {
  const program = descendantOf(npm.pid, script);
  const shell = procStat(program)?.ppid;
  if (shell === undefined) throw new Error(`cannot read /proc/${program}/stat`);
  expect(shell).not.toBe(npm.pid); // what this test is about: a shell between npm and the program
  group.adopt(program);
  group.adopt(shell);
  return { program, shell };
}

/** SIGKILLs npm, then waits for the program and its shell to be gone. */
async function killNpmAndWait(npm: Spawned, pids: { program: number; shell: number }) {
  npm.signal('SIGKILL');
  await npm.exit;
  await until(
    () => !alive(pids.program) && !alive(pids.shell),
    `the program (pid ${pids.program}) and npm's shell (pid ${pids.shell}) to stop after npm was killed`,
    STOP_WITHIN_MS,
    () => npm.describe(),
  );
}

/** Everything the process and its children wrote (the relay logs to stdout, the runner to stderr). */
function output(proc: Spawned): string {
  return [...proc.stdout.map((l) => l.text), proc.stderr()].join('\n');
}

async function waitForLine(proc: Spawned, start: string): Promise<void> {
  await until(
    () => proc.stdout.some((l) => l.text.startsWith(start)),
    `"${start}" on stdout`,
    20_000,
    () => proc.describe(),
    () => !proc.running(),
  );
}

describe.runIf(process.platform === 'linux')(
  'npm killed outright (SIGKILL)',
  { timeout: 60_000 },
  () => {
    it('`npm run sim`: the simulator stops cleanly and frees its port', async () => {
      group = new ProcessGroup();
      const port = await freePort();
      const npm = group.spawn('sim (npm)', 'npm', ['run', 'sim', '--', '--port', String(port)]);
      await waitForLine(npm, 'Screenpop service simulator');
      const pids = programUnder(npm, 'src-sim/cli.ts');
      expect(await listening(port)).toBe(true);

      await killNpmAndWait(npm, pids);
      expect(await listening(port)).toBe(false);
      expect(npm.stderr()).toContain('sim: stopping (parent-exited)');
      expect(npm.stderr()).toContain('sim: stopped');
    });

    it('`npm run relay`: the relay drains, stops and frees its port', async () => {
      group = new ProcessGroup();
      const port = await freePort();
      const config = join(group.tempDir('npm-killed-relay-'), 'relay.json');
      writeFileSync(
        config,
        JSON.stringify({
          host: '127.0.0.1',
          port,
          tenants: { acme: { baseUrl: 'https://acme.example.com', secrets: ['whsec-npm-killed'] } },
          storage: { kind: 'memory' },
          shutdownGraceMs: 1_000,
        }),
      );
      ensureRelayBuilt(); // npm's prerelay then only checks it
      const npm = group.spawn('relay (npm)', 'npm', ['run', 'relay', '--', '--config', config]);
      await waitForLine(npm, 'relay listening');
      const pids = programUnder(npm, RELAY);
      expect(await listening(port)).toBe(true);

      await killNpmAndWait(npm, pids);
      expect(await listening(port)).toBe(false);
      expect(output(npm)).toContain('"reason":"parent-exited"');
      expect(output(npm)).toContain('relay stopped');
    });

    it('`npm run -s headless`: the runner closes its connection and stops', async () => {
      group = new ProcessGroup();
      const sim = await new SimProcess(group, {}).start();
      const runner = startRunner(group, {
        baseUrl: sim.baseUrl,
        key: sim.key,
        secret: sim.secret,
        viaNpm: true,
      });
      await runner.waitForState('connected');
      const pids = programUnder(runner.proc, RUNNER);

      await killNpmAndWait(runner.proc, pids);
      expect(output(runner.proc)).toContain('"reason":"parent-exited"');
      const stats = await sim.control<{ stats: { wsOpen: number } }>('GET', 'stats');
      expect(stats.stats.wsOpen).toBe(0); // closed by the runner before it exited
    });
  },
);
