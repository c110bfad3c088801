/**
 * The relay as it ships: `node dist-relay/screenpop-relay.cjs` (the bundle scripts/build-relay.ts
 * makes, built first when the sources changed) in a child process, with a config file and
 * environment, so that tests and benchmarks judge the process (its memory, its signals, its exit
 * code, its log lines) and not an in-process server. `sources: true` runs src-relay/cli.ts instead
 * (`npm run relay:dev`). Everything it starts, it stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRelayBuilt, RELAY } from '../processes.ts';

export interface RelayProcess {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** The JSON log lines on stderr. */
  logLines(): { level: string; msg: string; [k: string]: unknown }[];
  /** Resident memory now (VmRSS), MiB. */
  rssMiB(): number;
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL if still running after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnRelayOptions {
  /** Written to a temporary file and passed with --config. */
  config?: Record<string, unknown>;
  /** A config file passed as it is with --config (instead of `config`). */
  configFile?: string;
  /** The folder holding dist-relay/ (default: this checkout); e.g. a copy of what an image holds. */
  cwd?: string;
  /** Run the TypeScript sources (src-relay/cli.ts, as `npm run relay:dev`) instead of the bundle. */
  sources?: boolean;
  env?: Record<string, string>;
  /** Extra Node options (e.g. --max-old-space-size). */
  nodeArgs?: string[];
  /** Give up waiting for "relay listening" after this long. */
  startTimeoutMs?: number;
}

export async function spawnRelay(options: SpawnRelayOptions = {}): Promise<RelayProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-proc-'));
  const args = [...(options.nodeArgs ?? []), relayEntry(options.sources)];
  if (options.config) {
    const file = join(dir, 'relay.json');
    writeFileSync(file, JSON.stringify(options.config));
    args.push('--config', file);
  } else if (options.configFile) args.push('--config', options.configFile);
  const child = spawn(process.execPath, args, {
    env: { ...process.env, RELAY_PORT: '0', RELAY_HOST: '127.0.0.1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, signal });
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`relay did not start:\n${err}`));
    }, options.startTimeoutMs ?? 15_000);
    const check = () => {
      const m = /relay listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`relay exited with ${code} before listening:\n${err}`));
    });
  });
  const pid = child.pid!;
  return {
    url,
    pid,
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    logLines: () =>
      err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l) as { level: string; msg: string };
          } catch {
            return { level: '?', msg: l };
          }
        }),
    rssMiB: () => rssMiB(pid),
    async stop(graceMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
}

/** The file `node` runs: the bundle (built now if the sources changed), or the sources. */
export function relayEntry(sources = false): string {
  if (sources) return 'src-relay/cli.ts';
  ensureRelayBuilt();
  return RELAY;
}

/**
 * `node dist-relay/screenpop-relay.cjs <args>` run to its end (--help, --check-config, a start that
 * fails): its exit code and output. Killed after `timeoutMs` (then `code` is null).
 */
export function runRelayCli(
  args: string[],
  options: {
    env?: Record<string, string | undefined>;
    cwd?: string;
    timeoutMs?: number;
    sources?: boolean;
  } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [relayEntry(options.sources), ...args], {
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/**
 * The relay run to its end with `config` (over one tenant, port 0) written into `dir`, and
 * `args` before --config (e.g. --check-config), and `env` added to this process's environment.
 */
export function runRelayWith(
  dir: string,
  config: Record<string, unknown>,
  args: string[] = [],
  env?: Record<string, string>,
  sources = false,
): Promise<{ code: number | null; out: string; err: string }> {
  const file = join(dir, 'relay.json');
  const tenants = {
    acme: { baseUrl: 'https://acme.pbx.example', secrets: ['whsec-0123456789abcdef'] },
  };
  writeFileSync(file, JSON.stringify({ tenants, port: 0, ...config }));
  return runRelayCli([...args, '--config', file], {
    timeoutMs: 15_000,
    sources,
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
}

/** VmRSS of a process in MiB (NaN once it has gone). */
export function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return NaN;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; reports the first and the highest. */
export function sampleRss(
  pid: number,
  intervalMs = 50,
): { stop(): { startMiB: number; peakMiB: number } } {
  const startMiB = rssMiB(pid);
  let peakMiB = startMiB;
  const timer = setInterval(() => {
    const v = rssMiB(pid);
    if (v > peakMiB) peakMiB = v;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const v = rssMiB(pid);
      if (v > peakMiB) peakMiB = v;
      return { startMiB, peakMiB };
    },
  };
}
