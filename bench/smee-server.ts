/**
 * smee.io's server (github.com/probot/smee.io, a webhook relay over Server-Sent Events) as a child
 * process, for bench/relay.ts to measure beside the relay with the same load workers. smee.io is
 * not published to the npm registry (its package.json is private), so the benchmark takes a
 * checkout of it: BENCH_SMEE_DIR=<dir> with its runtime dependencies installed
 * (`npm ci --omit=dev --ignore-scripts`) and the two built assets its server reads at start,
 * `public/main.min.css` and `public/main.min.js`, present (empty files do: the benchmark never
 * asks for them). Nothing of smee.io is in this repository.
 *
 * It runs as its README says (`node index.js`, PORT set, its own logger on, no Redis), on the same
 * Node as the relay, with one change from outside its code: bench/loopback-listen.ts is preloaded
 * so that its `listen` on 0.0.0.0 binds 127.0.0.1 only. Its log (a JSON line per request) goes to
 * /dev/null.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Why smee.io cannot be run from `dir`, or null when it can. */
export function smeeUnavailable(dir: string | undefined): string | null {
  if (!dir)
    return 'BENCH_SMEE_DIR not set (smee.io is not on the npm registry: see bench/smee-server.ts)';
  for (const f of ['index.js', 'node_modules/fastify', 'public/main.min.js', 'public/main.min.css'])
    if (!existsSync(join(dir, f))) return `${join(dir, f)} missing (see bench/smee-server.ts)`;
  return null;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });

const answers = (url: string) =>
  new Promise<boolean>((resolve) => {
    http
      .get(url, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      })
      .once('error', () => resolve(false));
  });

/** Starts smee.io from `dir`; resolves with its URL once it answers, and a stop function. */
export async function spawnSmee(
  dir: string,
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', fileURLToPath(new URL('loopback-listen.ts', import.meta.url)), 'index.js'],
    { cwd: dir, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const stop = () =>
    new Promise<void>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) return r();
      child.once('exit', () => r());
      child.kill('SIGTERM');
    });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`smee.io exited with ${child.exitCode}: ${err}`);
    if (await answers(`${url}/favicon.ico`)) return { url, pid: child.pid!, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`smee.io did not answer within 10 s: ${err}`);
}
