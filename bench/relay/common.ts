/**
 * The pieces every part of `npm run bench:relay` shares: the webhook secret and client tokens, how the
 * relay is started (bundle or sources, its Node options), the backends, process figures from /proc,
 * connecting clients, the floor server, and rounding.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { loadClient } from '../ws-load-client.ts';

export const SECRET = 'bench-webhook-secret-0123456789';

/** Each client has a token of its own, as each desktop does (the relay caps sessions per token). */
export const tokenOf = (i: number) => `bench-client-token-${i}`;

export const TOKENS = { has: (t: string) => t.startsWith('bench-client-token-') };

export const CONCURRENCY = 32;

/**
 * The Node options the relay is deployed with (test/relay/deploy.test.ts keeps them one);
 * BENCH_RELAY_NODE_ARGS replaces them ('' for none).
 */
export const RELAY_NODE_ARGS = '--max-semi-space-size=4';

export const relayNodeArgs = () =>
  (process.env.BENCH_RELAY_NODE_ARGS ?? RELAY_NODE_ARGS).split(' ').filter(Boolean);

/** BENCH_RELAY_FROM=sources runs the TypeScript sources (`npm run relay:dev`); default: the bundle. */
export const RELAY_FROM = process.env.BENCH_RELAY_FROM === 'sources' ? 'sources' : 'built';

/**
 * BENCH_RELAY_CHECKOUT=<dir>: run the relay of another checkout (its dist-relay/, built there, or
 * its sources), e.g. an older commit's for a before/after in one sitting.
 */
export const RELAY_CHECKOUT = process.env.BENCH_RELAY_CHECKOUT || undefined;

/** How every relay of this run is started: its Node options, and the bundle or the sources. */
export const relayStart = () => ({
  nodeArgs: relayNodeArgs(),
  sources: RELAY_FROM === 'sources',
  ...(RELAY_CHECKOUT && { cwd: RELAY_CHECKOUT }),
});

/** Which relay this run measures, for the output's first lines. */
export const relayDescribed = () =>
  `${RELAY_FROM === 'built' ? 'built (dist-relay/)' : 'from the sources'}${RELAY_CHECKOUT ? ` of ${RELAY_CHECKOUT}` : ''}, node ${relayNodeArgs().join(' ') || '(no options)'}`;

/** BENCH_BACKENDS=memory (or redis) runs one backend; the default runs both. */
export const BACKENDS = (['memory', 'redis'] as const).filter(
  (b) => !process.env.BENCH_BACKENDS || process.env.BENCH_BACKENDS.split(',').includes(b),
);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const pct = (sorted: ArrayLike<number>, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;

export const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

export function procStats(pid: number): {
  rssMiB: number;
  /**
   * The anonymous part of the RSS (RssAnon): the process's own memory, without the pages of its
   * executable and libraries it has read in (shared with every process running them, and growing
   * by megabytes when code first runs: a server's first clients page in its HTTP upgrade, crypto
   * and WebSocket code).
   */
  anonMiB: number;
  hwmMiB: number;
  cpuMs: number;
  writeSyscalls: number;
} {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100/s on Linux).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return {
    rssMiB: round(kb('VmRSS') / 1024),
    anonMiB: round(kb('RssAnon') / 1024),
    hwmMiB: round(kb('VmHWM') / 1024),
    cpuMs: ticks * 10,
    writeSyscalls: Number(/syscw:\s+(\d+)/.exec(io)?.[1] ?? NaN),
  };
}

/**
 * Connects `count` load clients, 100 at a time, each subscribed to one extension; the ones that
 * connected are pushed to `into` (so they are closed whatever happens).
 */
export async function connectClients(
  wsUrl: string,
  count: number,
  into: { close(): void }[],
  each: (i: number) => {
    extension: number;
    /** Default: tokenOf(i). */
    token?: string;
    localAddress?: string;
    onControl(): void;
    onEvent(n: number, at: number): void;
  },
): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, (_, j) => {
        const { extension, token, ...rest } = each(i + j);
        return loadClient({
          url: wsUrl,
          token: token ?? tokenOf(i + j),
          hello: {
            type: 'hello',
            v: 1,
            filter: { extensions: [String(extension)], dids: [], events: [] },
            cursor: null,
          },
          ...rest,
        }).catch(() => null);
      }),
    );
    for (const c of batch) if (c) into.push(c);
  }
}

export const loadAverage = () =>
  readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Starts bench/floor-server.ts as a child process; resolves with its URL and a stop function. */
export async function spawnFloor(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('../floor-server.ts', import.meta.url))],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /floor listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

export const round3 = (n: number) => round(n, 3);

export const round2 = (n: number) => round(n, 2);
