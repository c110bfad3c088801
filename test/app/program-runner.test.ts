/**
 * The real ProgramRunner against real process trees (POSIX): programs that ignore SIGTERM and
 * leave a child behind that ignores it too, bursts of starts, and stopping everything. Each test
 * program is a small sh script that writes its pid and its child's pid to files, so the test can
 * ask the kernel whether each is still alive. Real clock only (processes run in real time).
 */
import { readFileSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnProgramRunner } from '../../src-main/core/ring-actions/program-runner.ts';
import type { ProgramRunner } from '../../src-main/core/ring-actions/ring-actions.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('screenpop-programs-');
const posix = process.platform !== 'win32';

const runners: ProgramRunner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stopAll();
});

/**
 * Whether `pid` is a running process. A killed process whose parent has not reaped it yet (a
 * zombie: in a container, PID 1 may never reap the grandchildren it inherits) is not running.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/**
 * A program that ignores SIGTERM and starts a child (in its process group) that ignores it too;
 * both write their pid to `<out>.<n>.{parent,child}` and wait for ever (300 s).
 */
async function stubborn(): Promise<string> {
  const program = join(tmp.path, 'stubborn');
  await writeFile(
    program,
    [
      '#!/bin/sh',
      "trap '' TERM",
      'out="$1"',
      'sh -c \'trap "" TERM; echo $$ > "$0.child"; exec sleep 300\' "$out" &',
      'echo $$ > "$out.parent"',
      'wait',
      '',
    ].join('\n'),
  );
  await chmod(program, 0o755);
  return program;
}

async function pidsOf(out: string, timeoutMs = 5_000): Promise<{ parent: number; child: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = async (f: string) => Number((await readFile(f, 'utf8').catch(() => '')).trim());
    const parent = await read(`${out}.parent`);
    const child = await read(`${out}.child`);
    if (parent > 0 && child > 0) return { parent, child };
    if (Date.now() > deadline) throw new Error(`no pids written for ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function gone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids.filter(alive);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = left.filter(alive);
  }
  return left;
}

describe.runIf(posix)('spawnProgramRunner with real process trees', () => {
  it('stops a program that ignores SIGTERM and the child it left, SIGKILL after the grace time', async () => {
    const log = memoryLogger();
    const runner = spawnProgramRunner(log, { timeoutMs: 500, graceMs: 500 });
    runners.push(runner);
    const out = join(tmp.path, 'one');
    runner.run(await stubborn(), [out]);
    const { parent, child } = await pidsOf(out);
    expect(alive(parent) && alive(child)).toBe(true);
    // The time-out (0.5 s), SIGTERM ignored by both, SIGKILL to the group 0.5 s later.
    expect(await gone([parent, child], 5_000)).toEqual([]);
    expect(runner.running()).toBe(0);
    expect(log.records.map((r) => r.msg)).toEqual(
      expect.arrayContaining([
        'ring action: stopping a program and what it started',
        'ring action: program did not stop; killed',
      ]),
    );
  });

  it('runs at most maxRunning programs at once; the rest are dropped, logged once and counted', async () => {
    const log = memoryLogger();
    const runner = spawnProgramRunner(log, { timeoutMs: 60_000, graceMs: 500, maxRunning: 3 });
    runners.push(runner);
    const program = await stubborn();
    for (let i = 0; i < 30; i++) runner.run(program, [join(tmp.path, `burst-${i}`)]);
    expect(runner.running()).toBe(3);
    const started = await Promise.all([0, 1, 2].map((i) => pidsOf(join(tmp.path, `burst-${i}`))));
    const drops = log.records.filter((r) => r.msg.includes('this start is dropped'));
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ limit: 3 });
    await runner.stopAll();
    const pids = started.flatMap((p) => [p.parent, p.child]);
    expect(await gone(pids, 2_000)).toEqual([]);
    expect(log.records.find((r) => r.msg.includes('start again'))).toMatchObject({ dropped: 27 });
  });

  it('stopAll stops every program and its children (the app or the runner quitting), and starts no more', async () => {
    const log = memoryLogger();
    const runner = spawnProgramRunner(log, { timeoutMs: 60_000, graceMs: 300 });
    const program = await stubborn();
    for (const n of [1, 2, 3]) runner.run(program, [join(tmp.path, `all-${n}`)]);
    const pids = (
      await Promise.all([1, 2, 3].map((n) => pidsOf(join(tmp.path, `all-${n}`))))
    ).flatMap((p) => [p.parent, p.child]);
    const started = Date.now();
    await runner.stopAll();
    // Resolved after the grace time; the leaders are gone, and their children with them (a
    // killed grandchild is reaped by init a moment later).
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await gone(pids, 1_000)).toEqual([]);
    runner.run(program, [join(tmp.path, 'after')]);
    expect(runner.running()).toBe(0);
  });

  it('a program that exits leaving a child behind: the child is stopped at the deadline', async () => {
    const program = join(tmp.path, 'leaves-child');
    await writeFile(
      program,
      [
        '#!/bin/sh',
        'sh -c \'trap "" TERM; echo $$ > "$0.child"; exec sleep 300\' "$1" &',
        'echo $$ > "$1.parent"',
        'exit 0',
        '',
      ].join('\n'),
    );
    await chmod(program, 0o755);
    const runner = spawnProgramRunner(memoryLogger(), { timeoutMs: 700, graceMs: 300 });
    runners.push(runner);
    const out = join(tmp.path, 'orphan');
    runner.run(program, [out]);
    const { parent, child } = await pidsOf(out);
    expect(await gone([parent], 2_000)).toEqual([]);
    expect(alive(child)).toBe(true);
    expect(runner.running()).toBe(1); // its group is still watched
    expect(await gone([child], 5_000)).toEqual([]);
    expect(runner.running()).toBe(0);
  });
});
