/**
 * Black box: the long-running commands a newcomer starts from the README (`npm run sim`, `npm run
 * relay`), run exactly so, through npm. A busy port is one line and exit 1 (not Node's stack
 * trace); a SIGTERM to npm stops the server too (npm's shell does not pass the signal on: before,
 * the server lived on as an orphan under PPID 1, still serving, and the next start hit the busy
 * port). The runner's own case is in service.test.ts; all three share src-shared/process/stop-signal.ts.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
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
  until,
  type Spawned,
} from '../../rigs/processes.ts';

let group: ProcessGroup;
let blocker: Server | undefined;
afterEach(async () => {
  await group?.cleanup();
  await new Promise<void>((done) => (blocker ? blocker.close(() => done()) : done()));
  blocker = undefined;
});

/** Holds a port on 127.0.0.1, as another program would. */
async function busyPort(): Promise<number> {
  const port = await freePort();
  blocker = createServer();
  await new Promise<void>((done) => blocker!.listen(port, '127.0.0.1', done));
  return port;
}

/** A relay config on `port` with one tenant, in a temporary folder. */
function relayConfig(port: number): string {
  const file = join(group.tempDir('commands-relay-'), 'relay.json');
  writeFileSync(
    file,
    JSON.stringify({
      host: '127.0.0.1',
      port,
      tenants: { acme: { baseUrl: 'https://acme.example.com', secrets: ['whsec-commands'] } },
      storage: { kind: 'memory' },
      shutdownGraceMs: 1_000,
    }),
  );
  return file;
}

/** No stack frames ("    at ...") and no Node error dump ("node:internal", "Error: listen"). */
function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('node:internal');
  expect(stderr).not.toMatch(/^Error: listen/m);
}

/** stderr without npm's own warnings (a user's npmrc may add some). */
function ownLines(stderr: string): string[] {
  return stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('npm warn'));
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

describe('commands from the README, through npm', { timeout: 60_000 }, () => {
  it('`npm run sim -- --port <busy>`: one line naming the port and the remedy, exit 1', async () => {
    group = new ProcessGroup();
    const port = await busyPort();
    const sim = group.spawn('sim (npm, busy port)', 'npm', [
      'run',
      '-s',
      'sim',
      '--',
      '--port',
      String(port),
    ]);
    expect(await sim.exit).toEqual({ code: 1, signal: null });
    expect(sim.stdout.map((l) => l.text)).toEqual([]);
    expect(ownLines(sim.stderr())).toEqual([
      `sim: cannot start: cannot listen on 127.0.0.1:${port}: the port is in use by another program (EADDRINUSE). Stop that program (another simulator?), or choose another port: --port <n>, or --port 0 for a free one.`,
    ]);
    expectNoStack(sim.stderr());
  });

  it('`npm run sim -- --port -1`: the flag’s own words, exit 2', async () => {
    group = new ProcessGroup();
    const sim = group.spawn('sim (npm, negative port)', 'npm', [
      'run',
      '-s',
      'sim',
      '--',
      '--port',
      '-1',
    ]);
    expect(await sim.exit).toEqual({ code: 2, signal: null });
    expect(ownLines(sim.stderr())[0]).toBe('invalid --port: -1'); // before: "argument is ambiguous"
  });

  it('`npm run relay -- --config <file>` on a busy port: one line, exit 1', async () => {
    group = new ProcessGroup();
    const port = await busyPort();
    const relay = group.spawn('relay (npm, busy port)', 'npm', [
      'run',
      '-s',
      'relay',
      '--',
      '--config',
      relayConfig(port),
    ]);
    expect((await relay.exit).code).toBe(1);
    expect(relay.stderr()).toContain(
      `relay: cannot start: cannot listen on 127.0.0.1:${port}: the port is in use by another program (EADDRINUSE).`,
    );
    expectNoStack(relay.stderr());
  });

  it('SIGTERM to `npm run sim` stops the simulator too: no orphan, the port free again', async () => {
    group = new ProcessGroup();
    const port = await freePort();
    const npm = group.spawn('sim (npm)', 'npm', ['run', 'sim', '--', '--port', String(port)]);
    await waitForLine(npm, 'Screenpop service simulator');
    const simPid = descendantOf(npm.pid, 'src-sim/cli.ts');
    group.adopt(simPid);
    expect(await listening(port)).toBe(true);

    npm.signal('SIGTERM');
    await npm.exit;
    await until(
      () => !alive(simPid),
      'the simulator to stop after npm',
      10_000,
      () => npm.describe(),
    );
    expect(await listening(port)).toBe(false);
    // It can start again on the same port at once.
    const again = group.spawn('sim again', 'npm', ['run', 'sim', '--', '--port', String(port)]);
    await waitForLine(again, 'Screenpop service simulator');
    // The group's cleanup kills npm outright; the simulator then stops by itself, as npm's shell's
    // parent changes (npm-killed.test.ts). Adopted as well, so a failure here leaves nothing behind.
    group.adopt(descendantOf(again.pid, 'src-sim/cli.ts'));
  });

  it('SIGTERM to `npm run relay` stops the relay too, after its drain', async () => {
    group = new ProcessGroup();
    const port = await freePort();
    ensureRelayBuilt(); // npm's prerelay then only checks it (the start stays within its timeout)
    const npm = group.spawn('relay (npm)', 'npm', [
      'run',
      'relay',
      '--',
      '--config',
      relayConfig(port),
    ]);
    await waitForLine(npm, 'relay listening');
    const relayPid = descendantOf(npm.pid, RELAY);
    group.adopt(relayPid);
    expect(await listening(port)).toBe(true);

    npm.signal('SIGTERM');
    await npm.exit;
    await until(
      () => !alive(relayPid),
      'the relay to stop after npm',
      15_000,
      () => npm.describe(),
    );
    expect(await listening(port)).toBe(false);
  });

  it('`node src-sim/cli.ts` says it stopped after a SIGTERM, exit 0', async () => {
    group = new ProcessGroup();
    const sim = group.spawn('sim', process.execPath, ['src-sim/cli.ts']);
    await waitForLine(sim, 'Screenpop service simulator');
    sim.signal('SIGTERM');
    sim.signal('SIGTERM'); // a second one (npm and a service manager both) changes nothing
    expect(await sim.exit).toEqual({ code: 0, signal: null });
    expect(ownLines(sim.stderr())).toEqual(['sim: stopping (SIGTERM)', 'sim: stopped']);
  });
});
