/**
 * A test worker that dies takes its servers with it: a stand-in worker starts a redis-server and a
 * Node server the way the tests do, is killed with SIGKILL (no afterAll runs), and both servers
 * must be gone and their ports closed within 5 s. Before rigs/owned-spawn.ts both stayed
 * at PPID 1, listening (the orphan redis-server of session 3). Linux only: the parent-death signal
 * is a Linux feature (setpriv).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, envWithout, listening, NODE, REPO, sleep } from '../../rigs/processes.ts';

interface Started {
  redis: { pid: number; port: number; dir: string };
  server: { pid: number; port: number };
}

const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe.runIf(process.platform === 'linux')('servers started by a test worker', () => {
  it('die with the worker when it is killed before its cleanup', { timeout: 30_000 }, async () => {
    // On the real clock: redis-server cannot start under libfaketime (CI's run five years ahead),
    // and what is tested here, a process dying with its parent, does not depend on the date.
    const worker = spawn(NODE, ['test/blackbox/fixtures/servers-then-hang.ts'], {
      cwd: REPO,
      env: envWithout(['LD_PRELOAD', 'FAKETIME', 'FAKETIME_DONT_FAKE_MONOTONIC']),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((done) => worker.once('exit', () => done()));
    const line = await new Promise<string>((done, fail) => {
      createInterface({ input: worker.stdout! }).once('line', done);
      worker.once('exit', (code) => fail(new Error(`the stand-in worker exited (${code})`)));
    });
    const started = JSON.parse(line) as Started;
    leftovers.push(started.redis.pid, started.server.pid);
    expect(await listening(started.redis.port)).toBe(true);
    expect(await listening(started.server.port)).toBe(true);

    worker.kill('SIGKILL');
    await exited;
    const pids = [started.redis.pid, started.server.pid];
    for (let i = 0; i < 200 && pids.some(alive); i++) await sleep(25);
    rmSync(started.redis.dir, { recursive: true, force: true });
    expect(pids.filter(alive)).toEqual([]);
    expect(await listening(started.redis.port)).toBe(false);
    expect(await listening(started.server.port)).toBe(false);
  });
});
