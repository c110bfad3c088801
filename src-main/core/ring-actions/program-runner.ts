/**
 * The real ProgramRunner: child_process.spawn with an argument list and `shell: false`, so no
 * shell ever parses a caller's name. Output is discarded and the window hidden on Windows. Start
 * failures and exit codes are logged (the arguments are not: they hold caller details).
 *
 * Bounded, because every ring can start programs and rings come in bursts:
 * - at most `maxRunning` programs at once: a start beyond that is dropped (a call that rings now
 *   wants its action now, not minutes later), logged once per burst, and counted in the line that
 *   says when starts resume;
 * - each program runs in its own process group (POSIX: `detached`, the child leads its group), so
 *   that what it starts is stopped with it: after `timeoutMs` the whole group gets SIGTERM, and
 *   SIGKILL `graceMs` later if anything of it is left; on Windows the tree is ended with
 *   taskkill /T /F (by its full path, under the fixed system folder);
 * - `stopAll()` (the runner stopping, the app quitting) does the same to every group still alive.
 * A group whose leader exited while others of it run on (a program that left a child behind) is
 * watched until its deadline like a running one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { systemClock, type Clock, type TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { ProgramRunner } from './ring-actions.ts';

export interface ProgramRunnerOptions {
  /** A program (and everything it started) still running after this is stopped. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL. */
  graceMs?: number;
  /** Programs (process groups) alive at once; a start beyond is dropped. */
  maxRunning?: number;
  clock?: Clock;
  platform?: NodeJS.Platform;
}

export const DEFAULT_MAX_RUNNING = 8;

/** taskkill under the fixed system folder (never looked up on PATH, never from %SystemRoot%). */
const TASKKILL = 'C:\\Windows\\System32\\taskkill.exe';

interface Group {
  /** The leader's pid, which is also the process group id on POSIX. */
  pid: number;
  program: string;
  leaderExited: boolean;
  /** running; terminating: SIGTERM sent, SIGKILL follows after the grace time. */
  phase: 'running' | 'terminating';
  /** Resolves when the leader has exited (and been reaped). */
  exited: Promise<void>;
  deadline: TimerHandle | undefined;
  killTimer: TimerHandle | undefined;
}

export function spawnProgramRunner(
  logger: Logger,
  options: ProgramRunnerOptions | number = {},
): ProgramRunner {
  const o = typeof options === 'number' ? { timeoutMs: options } : options;
  const timeoutMs = o.timeoutMs ?? 60_000;
  const graceMs = o.graceMs ?? 5_000;
  const maxRunning = o.maxRunning ?? DEFAULT_MAX_RUNNING;
  const clock = o.clock ?? systemClock;
  const windows = (o.platform ?? process.platform) === 'win32';
  const log = logger.child({ component: 'ring-actions' });
  const groups = new Map<number, Group>();
  let dropped = 0;
  let stopping = false;

  /** Whether anything of the group is still alive (signal 0 checks without sending). */
  const groupAlive = (pid: number): boolean => {
    if (windows) return false; // the leader's exit is all Windows tells us without a tool
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  const signalGroup = (group: Group, signal: 'SIGTERM' | 'SIGKILL'): void => {
    if (windows) {
      // taskkill has no gentle form for a windowless program: /F ends the tree at once.
      if (signal === 'SIGKILL' || !group.leaderExited)
        spawn(TASKKILL, ['/PID', String(group.pid), '/T', '/F'], {
          shell: false,
          stdio: 'ignore',
          windowsHide: true,
        }).on('error', (err) => log.warn('ring action: taskkill failed', { error: err }));
      return;
    }
    try {
      process.kill(-group.pid, signal);
    } catch {
      // the group is gone already
    }
  };

  const emptied: Array<() => void> = [];
  const forget = (group: Group): void => {
    if (!groups.delete(group.pid)) return;
    clock.clearTimeout(group.deadline);
    clock.clearTimeout(group.killTimer);
    if (dropped > 0 && groups.size < maxRunning) {
      log.warn('ring action: programs start again; starts dropped while at the limit', {
        dropped,
        limit: maxRunning,
      });
      dropped = 0;
    }
    if (groups.size === 0) for (const done of emptied.splice(0)) done();
  };

  /**
   * SIGTERM to the group now; after the grace time SIGKILL to whatever of it is left, and the
   * group is forgotten (nothing more can be done, and stopAll must end).
   */
  const stopGroup = (group: Group, why: string): void => {
    if (group.phase === 'terminating') return;
    group.phase = 'terminating';
    clock.clearTimeout(group.deadline);
    log.warn('ring action: stopping a program and what it started', {
      program: group.program,
      why,
    });
    signalGroup(group, 'SIGTERM');
    group.killTimer = clock.setTimeout(() => {
      if (!group.leaderExited || groupAlive(group.pid)) {
        log.warn('ring action: program did not stop; killed', { program: group.program });
        signalGroup(group, 'SIGKILL');
      }
      forget(group);
    }, graceMs);
  };

  const watch = (child: ChildProcess, program: string): void => {
    const pid = child.pid;
    if (pid === undefined) return; // did not start: 'error' follows
    let exited = (): void => {};
    const group: Group = {
      pid,
      program,
      leaderExited: false,
      phase: 'running',
      exited: new Promise<void>((resolve) => (exited = resolve)),
      deadline: undefined,
      killTimer: undefined,
    };
    group.deadline = clock.setTimeout(
      () => stopGroup(group, `still running after ${Math.round(timeoutMs / 1000)} s`),
      timeoutMs,
    );
    groups.set(pid, group);
    child.once('exit', (code, signal) => {
      group.leaderExited = true;
      exited();
      if (group.phase === 'running' && code !== 0)
        log.warn('ring action: program ended with an error', { program, code, signal });
      // Something it started may still run in its group: then it is watched until its deadline
      // (or, when stopping, until the grace time ends).
      if (!groupAlive(pid)) forget(group);
    });
  };

  return {
    run(program, args) {
      if (stopping) return;
      if (groups.size >= maxRunning) {
        if (dropped === 0)
          log.warn('ring action: too many programs running; this start is dropped', {
            program,
            limit: maxRunning,
          });
        dropped++;
        return;
      }
      const child = spawn(program, [...args], {
        shell: false,
        stdio: 'ignore',
        windowsHide: true,
        // POSIX: the child leads a new process group, which is what stopGroup signals.
        detached: !windows,
      });
      child.on('error', (err) =>
        log.warn('ring action: program could not start', { program, error: err }),
      );
      watch(child, program);
    },

    async stopAll() {
      stopping = true;
      if (groups.size === 0) return;
      const all = [...groups.values()];
      const done = new Promise<void>((resolve) => emptied.push(resolve));
      for (const group of all) stopGroup(group, 'Screenpop is stopping');
      await done;
      // SIGKILL is sent; the leaders' exits follow at once (bounded, should one be stuck in the kernel).
      let bound: TimerHandle | undefined;
      await Promise.race([
        Promise.all(all.map((g) => g.exited)),
        new Promise<void>((resolve) => (bound = clock.setTimeout(resolve, 1_000))),
      ]);
      clock.clearTimeout(bound);
    },

    running() {
      return groups.size;
    },
  };
}
