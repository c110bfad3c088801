/**
 * Black box: screenpop-headless run as an administrator runs it. The systemd unit's ExecStart line
 * as written in docs/systemd/ (paths moved to this checkout), stopped as systemd stops it; `npm
 * run -s headless` stopped by a SIGTERM to npm (npm's shell does not pass it on: the runner must not
 * be left behind as an orphan); exit codes through npm; bin/screenpop-headless.js on the system's
 * Node 20.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  alive,
  descendantOf,
  ensureRunnerBuilt,
  ProcessGroup,
  REPO,
  RUNNER,
  until,
} from '../../rigs/processes.ts';
import { RunnerProcess, SimProcess, startRunner } from './services.ts';

let group: ProcessGroup;
// The unit's ExecStart and bin run the build (dist-headless/): make it match the sources first.
beforeAll(() => ensureRunnerBuilt(), 180_000);
afterEach(async () => {
  await group?.cleanup();
});

/** The simulator's open sockets, once the count has settled (a close takes a moment to land). */
async function openSockets(sim: SimProcess): Promise<number> {
  let open = -1;
  for (let i = 0; i < 30 && open !== 0; i++) {
    open = (await sim.control<{ stats: { wsOpen: number } }>('GET', 'stats')).stats.wsOpen;
    if (open !== 0) await new Promise((r) => setTimeout(r, 100));
  }
  return open;
}

/** The unit file's ExecStart, split into words, with /opt/screenpop moved to this checkout. */
function unitExecStart(): string[] {
  const unit = readFileSync(join(REPO, 'docs/systemd/screenpop-headless.service'), 'utf8');
  const line = unit.split('\n').find((l) => l.startsWith('ExecStart='));
  if (!line) throw new Error('the unit has no ExecStart');
  return line
    .slice('ExecStart='.length)
    .replaceAll('/opt/screenpop', REPO)
    .split(/\s+/)
    .filter(Boolean);
}

/** The example EnvironmentFile's variable names (the values are placeholders). */
function unitEnvNames(): string[] {
  return readFileSync(join(REPO, 'docs/systemd/screenpop-headless.env'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.split('=')[0]!);
}

describe('screenpop-headless as a service', { timeout: 60_000 }, () => {
  it("runs the systemd unit's ExecStart as written and stops on systemd's SIGTERM with exit 0", async () => {
    group = new ProcessGroup();
    const sim = await new SimProcess(group, {}).start();
    const [command, ...args] = unitExecStart();
    expect(unitEnvNames()).toEqual(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']);
    // The unit's --base-url is a placeholder: point it at the simulator.
    const i = args.indexOf('--base-url');
    expect(i).toBeGreaterThan(0);
    args[i + 1] = sim.baseUrl;
    const runner = new RunnerProcess(
      group.spawn('runner (unit ExecStart)', command!, args, {
        env: {
          PATH: '/usr/bin:/bin',
          SCREENPOP_API_KEY: sim.key,
          SCREENPOP_API_SECRET: sim.secret,
        },
      }),
    );
    await runner.waitForState('connected');
    // KillMode=mixed: SIGTERM to the main process; a second one (e.g. from npm as well) is harmless.
    runner.proc.signal('SIGTERM');
    runner.proc.signal('SIGTERM');
    expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
    expect(runner.proc.stderr()).toContain('"reason":"SIGTERM"');
    expect(await openSockets(sim)).toBe(0); // the runner closed its socket before it exited
  });

  it('SIGTERM to `npm run -s headless` stops the runner too: no orphan, sockets closed', async () => {
    group = new ProcessGroup();
    const sim = await new SimProcess(group, {}).start();
    const runner = await startRunner(group, {
      baseUrl: sim.baseUrl,
      key: sim.key,
      secret: sim.secret,
      viaNpm: true,
    });
    await runner.waitForState('connected');
    // npm -> sh -> node: find the runner's own process.
    const nodePid = descendantOf(runner.proc.pid, RUNNER);
    group.adopt(nodePid);

    runner.proc.signal('SIGTERM');
    await runner.proc.exit;
    await until(
      () => !alive(nodePid),
      'the runner to stop after npm',
      10_000,
      () => runner.explain(),
    );
    expect(await openSockets(sim)).toBe(0);
  });

  it('keeps its exit codes through npm: 2 for a usage error, 3 when the key is refused', async () => {
    group = new ProcessGroup();
    const sim = await new SimProcess(group, {}).start();
    const usage = await startRunner(group, {
      baseUrl: sim.baseUrl,
      key: sim.key,
      secret: sim.secret,
      args: ['--region', 'not-a-region'],
      viaNpm: true,
    });
    expect((await usage.proc.exit).code).toBe(2);
    const refused = await startRunner(group, {
      baseUrl: sim.baseUrl,
      key: sim.key,
      secret: 'not-the-secret',
      viaNpm: true,
    });
    expect((await refused.proc.exit).code).toBe(3);
    expect(refused.lines.at(-1)).toMatchObject({ type: 'status', state: 'needs-attention' });
  });
});

// The system's Node here is 20 (the project's own Node 24 comes from the `node` devDependency).
const SYSTEM_NODE = '/usr/bin/node';
const systemNodeVersion = existsSync(SYSTEM_NODE)
  ? spawnSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim()
  : '';
const oldNode = /^v(1\d|2[01])\.|^v22\.(\d|1[0-7])\./.test(systemNodeVersion);
if (!oldNode)
  console.warn(
    `bin/screenpop-headless.js on an old Node not tested: ${SYSTEM_NODE} is ${systemNodeVersion || 'missing'}`,
  );

describe('bin/screenpop-headless.js', () => {
  it.skipIf(!oldNode)(`on Node < 22.18 (${systemNodeVersion}) says it needs 22.18, exit 2`, () => {
    const run = spawnSync(SYSTEM_NODE, ['bin/screenpop-headless.js', '--help'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('screenpop-headless needs Node.js 22.18 or newer');
    expect(run.stderr).toContain(systemNodeVersion.slice(1));
    expect(run.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
  });

  it('on this Node runs the runner (--help, exit 0)', () => {
    const run = spawnSync(process.execPath, ['bin/screenpop-headless.js', '--help'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: screenpop-headless/);
  });
});
