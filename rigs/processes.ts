/**
 * The shipped commands as separate processes, for the black-box suite and the soak: spawn, read
 * their output, signal them, and always clean up (SIGCONT then SIGKILL for anything still running,
 * temporary folders removed), even when a test fails half-way. No vitest import: `soak.ts` uses this
 * file outside the test runner.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ownedByThisProcess } from './owned-spawn.ts';

/** The repository root: every command runs from there, as a user runs them. */
export const REPO = resolve(import.meta.dirname, '..');
/** The Node that runs the tests (Node 24 from the `node` devDependency under npm scripts). */
export const NODE = process.execPath;
/**
 * The runner as it ships: bin/screenpop-headless.js, which runs the bundle in dist-headless/
 * (scripts/build-headless.ts). Call `ensureRunnerBuilt()` before spawning it.
 */
export const RUNNER = 'bin/screenpop-headless.js';
/**
 * The relay as it ships (`npm run relay`, the image, the systemd unit): the bundle in dist-relay/
 * (scripts/build-relay.ts). Call `ensureRelayBuilt()` before spawning it. Its sources,
 * src-relay/cli.ts, run only under `npm run relay:dev`.
 */
export const RELAY = 'dist-relay/screenpop-relay.cjs';

const built = new Set<string>();
/**
 * Builds a bundle when it does not match the sources (`<script> --if-stale`, as `npm run headless`
 * and `npm run relay` do; once per test process), so that every black-box test runs what ships, as
 * it is now. Synchronous, so that spawning stays synchronous for every caller: a hash check (a
 * fraction of a second) when the build is current, a few seconds when not. Test files building at
 * the same time are safe: each file of the build is written atomically, inputs.json last.
 */
function ensureBuilt(script: string): void {
  if (built.has(script)) return;
  execFileSync(NODE, [script, '--if-stale'], {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 180_000,
  });
  built.add(script);
}

/** dist-headless/ as the sources are now (scripts/build-headless.ts). */
export const ensureRunnerBuilt = (): void => ensureBuilt('scripts/build-headless.ts');
/** dist-relay/ as the sources are now (scripts/build-relay.ts). */
export const ensureRelayBuilt = (): void => ensureBuilt('scripts/build-relay.ts');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface OutputLine {
  text: string;
  /** Wall-clock ms at which this process read the line. */
  at: number;
}

/** The last 64 KiB of stderr are kept: enough to explain a failure, bounded over a long soak. */
const STDERR_KEEP = 64 * 1024;

export class Spawned {
  readonly name: string;
  readonly child: ChildProcess;
  readonly stdout: OutputLine[] = [];
  readonly exit: Promise<Exit>;
  private err = '';
  private exited: Exit | undefined;
  private readonly lineListeners = new Set<(line: OutputLine) => void>();

  constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.child = child;
    this.exit = new Promise<Exit>((done) =>
      child.once('exit', (code, signal) => {
        this.exited = { code, signal };
        done(this.exited);
      }),
    );
    child.once('error', (error) => {
      this.err += `spawn failed: ${error.message}\n`;
    });
    if (child.stdout)
      createInterface({ input: child.stdout }).on('line', (text) => {
        const line = { text, at: Date.now() };
        this.stdout.push(line);
        for (const l of this.lineListeners) l(line);
      });
    child.stderr?.on('data', (d: Buffer) => {
      this.err = (this.err + d.toString()).slice(-STDERR_KEEP);
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  running(): boolean {
    return this.exited === undefined;
  }

  exitStatus(): Exit | undefined {
    return this.exited;
  }

  stderr(): string {
    return this.err;
  }

  onLine(listener: (line: OutputLine) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running()) this.child.kill(signal);
  }

  /** SIGTERM (after SIGCONT, in case it was stopped), then SIGKILL if it has not exited in time. */
  async stop(timeoutMs = 10_000): Promise<Exit> {
    if (this.running()) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.signal('SIGKILL'), timeoutMs);
      await this.exit;
      clearTimeout(timer);
    }
    return this.exit;
  }

  /** What a failure message should show about this process. */
  describe(): string {
    const status = this.exited ? ` exited ${JSON.stringify(this.exited)}` : ' running';
    return `--- ${this.name} (pid ${this.pid})${status}\n${this.err.slice(-4000)}`;
  }
}

/** Every process and temporary folder of one test (or one soak), cleaned up together. */
export class ProcessGroup {
  private readonly procs: Spawned[] = [];
  private readonly dirs: string[] = [];
  /** Grandchildren found by pid (a runner under npm): killed by cleanup() too, if still there. */
  private readonly adopted: number[] = [];

  spawn(
    name: string,
    command: string,
    args: string[],
    options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ): Spawned {
    // Killed by the kernel if this test worker dies before cleanup() (rigs/owned-spawn.ts).
    const child = spawn(...ownedByThisProcess(command, args), {
      cwd: options.cwd ?? REPO,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = new Spawned(name, child);
    this.procs.push(proc);
    return proc;
  }

  /**
   * The runner as it ships (`node [nodeArgs] bin/screenpop-headless.js ...args`), built first when
   * the sources changed.
   */
  spawnRunner(
    name: string,
    args: string[],
    options: { env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {},
  ): Spawned {
    ensureRunnerBuilt();
    const env = options.env ? { env: options.env } : {};
    return this.spawn(name, NODE, [...(options.nodeArgs ?? []), RUNNER, ...args], env);
  }

  /** Kill `pid` in cleanup() as well (a process this group did not spawn itself). */
  adopt(pid: number): void {
    this.adopted.push(pid);
  }

  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  /** Stderr of every process, for a failure message. */
  describe(): string {
    return this.procs.map((p) => p.describe()).join('\n');
  }

  /** Kills what still runs (a stopped process is continued first) and removes the folders. */
  async cleanup(): Promise<void> {
    for (const p of this.procs) {
      if (!p.running()) continue;
      p.signal('SIGCONT');
      p.signal('SIGKILL');
    }
    await Promise.all(this.procs.map((p) => p.exit));
    this.procs.length = 0;
    for (const pid of this.adopted.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Child pids of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * The process under `pid` (npm -> sh -> node) with `script` as one of its arguments: the program a
 * `npm run <script>` started (not npm's shell, whose one argument only contains it). Throws,
 * listing what is there, when none is.
 */
export function descendantOf(pid: number, script: string): number {
  const descendants = (p: number): number[] => childrenOf(p).flatMap((c) => [c, ...descendants(c)]);
  const pids = descendants(pid);
  const found = pids.find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(script);
    } catch {
      return false; // gone meanwhile
    }
  });
  if (found === undefined) throw new Error(`no ${script} under pid ${pid}: ${pids.join(', ')}`);
  return found;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** True when something accepts a TCP connection on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

/**
 * Polls `check` every 25 ms until it holds; fails after `timeoutMs` with `what` and `detail()`, or
 * at once when `gone()` says the process it waits on has exited.
 */
export async function until(
  check: () => boolean,
  what: string,
  timeoutMs: number,
  detail: () => string = () => '',
  gone: () => boolean = () => false,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (gone()) throw new Error(`the process exited while waiting for ${what}\n${detail()}`);
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${detail()}`);
    await sleep(25);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** The environment without variables that would change what a child does (a preloaded fake clock for redis, for one). */
export function envWithout(
  names: string[],
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const n of names) delete env[n];
  return env;
}

/**
 * CPU time `pid` has used so far, user and system, in seconds (Linux /proc/<pid>/stat, fields 14
 * and 15 in clock ticks of 1/100 s, Linux's USER_HZ on every architecture it runs on).
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the name (which may hold spaces), from its last ')': state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Share of one core `pid` used over the next `ms` (CPU seconds per wall second). */
export async function cpuShare(pid: number, ms: number): Promise<number> {
  const cpu0 = cpuSeconds(pid);
  const t0 = Date.now();
  await sleep(ms);
  return (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
}
