/**
 * The runner's call log (--crm-log, issue 39) as a process: 50 calls rung on the simulator, logged
 * into the fake HubSpot (reached at api.hubapi.com through a tunnelling proxy, as the CRM lookup's
 * runner test does) through an outage of the fake (answers 503, then dropped connections) and a
 * runner restart in the middle (SIGTERM with calls still queued, a new runner on the same queue
 * folder). Every call must be in HubSpot exactly once, and each printed once as a `logged` line.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { childEnv } from '../support/child-env.ts';
import { waitFor } from '../../rigs/wait.ts';
import { certToolsAvailable, makeTestCa } from '../../rigs/certs.ts';
import { startFakeHubSpot } from '../../rigs/fake-hubspot.ts';

const CLI = 'src-main/headless/cli.ts';
const TOKEN = 'pat-na1-runner-writes';
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Child {
  proc: ChildProcessWithoutNullStreams;
  lines: Array<Record<string, unknown>>;
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(args: string[], env: Record<string, string>): Child {
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  createInterface({ input: proc.stdout }).on('line', (l) =>
    lines.push(JSON.parse(l) as Record<string, unknown>),
  );
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  cleanup.push(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  return { proc, lines, stderr: () => err, exit };
}

/** A forward proxy tunnelling every CONNECT to one local port (api.hubapi.com is the fake). */
async function tunnelTo(port: number): Promise<string> {
  const tunnels = new Set<Socket>();
  const server = createHttpServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (_req: IncomingMessage, client: Socket, head: Buffer) => {
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(client).add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of tunnels) s.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const logged = (c: Child) => c.lines.filter((l) => l.type === 'logged');

it.skipIf(!certToolsAvailable('test/headless/crm-log.test.ts'))(
  '--crm-log: 50 calls through an outage of HubSpot and a runner restart, each logged exactly once',
  async () => {
    const sim: Simulator = await startSimulator();
    cleanup.push(() => sim.close());
    const dir = mkdtempSync(join(tmpdir(), 'runner-crm-log-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const ca = makeTestCa(dir);
    const cert = ca.issue('hubspot', { hosts: ['DNS:api.hubapi.com'] });
    const hubspot = await startFakeHubSpot({
      cert: cert.cert,
      key: cert.key,
      tokens: { [TOKEN]: ['crm.objects.contacts.read', 'crm.objects.contacts.write'] },
    });
    cleanup.push(() => hubspot.close());
    const proxy = await tunnelTo(Number(new URL(hubspot.url).port));
    const folder = join(dir, 'call-log');
    const start = () =>
      run(
        [
          '--base-url',
          sim.baseUrl,
          '--extension',
          '101',
          '--crm',
          'hubspot',
          '--crm-log',
          'answered-and-missed',
          '--crm-log-folder',
          folder,
          '--ca-file',
          ca.caFile,
        ],
        {
          SCREENPOP_API_KEY: sim.apiKey.key,
          SCREENPOP_API_SECRET: sim.apiKey.secret,
          SCREENPOP_CRM_TOKEN: TOKEN,
          HTTPS_PROXY: proxy,
          NO_PROXY: '127.0.0.1,localhost',
        },
      );
    const wait = (c: Child) => ({ timeoutMs: 15_000, detail: () => `stderr:\n${c.stderr()}` });
    const connected = (c: Child) =>
      waitFor(
        () => c.lines.some((l) => l.type === 'status' && l.state === 'connected'),
        'connected',
        wait(c),
      );
    const expected: Array<{ id: string; outcome: 'answered' | 'missed' }> = [];
    const call = async (i: number, c: Child) => {
      const id = sim.ring({ from: `+1415555${String(1000 + i)}`, to: '101' });
      await waitFor(
        () => c.lines.some((l) => l.type === 'pop' && l.call_id === id),
        'pop',
        wait(c),
      );
      const missed = i % 5 === 4;
      sim.setCallState(id, missed ? 'ended' : 'answered');
      // An answered call is logged at its hang-up, with its talk time.
      if (!missed) {
        await new Promise((r) => setTimeout(r, 20));
        sim.setCallState(id, 'ended');
      }
      expected.push({ id, outcome: missed ? 'missed' : 'answered' });
    };

    const first = start();
    await connected(first);
    for (let i = 0; i < 15; i++) await call(i, first);
    await waitFor(() => logged(first).length >= 15, '15 logged', wait(first));
    // The outage: HubSpot answers 503, then drops connections; the calls wait in the queue.
    hubspot.failNext(3, 503);
    hubspot.failNext(2, 'drop');
    for (let i = 15; i < 25; i++) await call(i, first);
    // Restarted with calls still queued.
    first.proc.kill('SIGTERM');
    expect(await first.exit).toBe(0);
    const queuedAtRestart = 25 - hubspot.calls.size;

    const second = start();
    await connected(second);
    for (let i = 25; i < 50; i++) await call(i, second);
    await waitFor(
      () => hubspot.calls.size >= 50 && logged(first).length + logged(second).length >= 50,
      'all 50 in HubSpot',
      { timeoutMs: 25_000, detail: () => `in HubSpot: ${hubspot.calls.size}\n${second.stderr()}` },
    );
    // Anything still in flight lands before counting.
    await new Promise((r) => setTimeout(r, 300));

    expect(queuedAtRestart).toBeGreaterThan(0);
    expect(hubspot.calls.size).toBe(50);
    const lines = [...logged(first), ...logged(second)];
    const byCall = new Map<string, number>();
    for (const l of lines) byCall.set(String(l.call_id), (byCall.get(String(l.call_id)) ?? 0) + 1);
    expect([...byCall.keys()].sort()).toEqual(expected.map((e) => e.id).sort());
    expect([...byCall.values()].every((n) => n === 1)).toBe(true);
    const statuses = [...hubspot.calls.values()].map((c) => c.properties.hs_call_status);
    expect(statuses.filter((s) => s === 'NO_ANSWER')).toHaveLength(10);
    expect(statuses.filter((s) => s === 'COMPLETED')).toHaveLength(40);
    // Talk time from the answer to the hang-up (was 0 for every call before the hang-up was used).
    const talked = [...hubspot.calls.values()]
      .filter((c) => c.properties.hs_call_status === 'COMPLETED')
      .map((c) => Number(c.properties.hs_call_duration));
    expect(talked.filter((ms) => ms > 0).length).toBeGreaterThan(30);
    expect(readdirSync(folder).filter((f) => f.endsWith('.json'))).toHaveLength(50);
    second.proc.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  },
  60_000,
);
