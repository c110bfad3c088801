/**
 * The runner's call log to the generic HTTPS connector (issue 39) as a process: calls rung on the
 * simulator are POSTed to a local receiver (http on 127.0.0.1, which the one secure-or-loopback
 * rule allows) given with --crm-log-url, signed with the secret from --crm-log-secret-file (or
 * SCREENPOP_CRM_LOG_SECRET). The receiver checks each request as docs/crm/call-log-webhook.md
 * tells a receiver to (the raw body, the timestamp within 5 minutes, HMAC-SHA256 over
 * "<timestamp>.<raw body>" compared in constant time, stored by Idempotency-Key). The secret is never on the command line nor in the output.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { startSimulator } from '../../src-sim/index.ts';
import { childEnv } from '../support/child-env.ts';
import { waitFor } from '../../rigs/wait.ts';

const CLI = 'src-main/headless/cli.ts';
const SECRET = 'whsec-runner-5d1c8e2a9f';
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
}

/** A receiver as the docs describe one: verifies, then stores by Idempotency-Key. */
async function startReceiver(secret: string) {
  const requests: Received[] = [];
  const refused: string[] = [];
  const stored = new Map<string, Record<string, unknown>>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({ headers: req.headers, raw });
      const timestamp = String(req.headers['x-screenpop-timestamp'] ?? '');
      const given = String(req.headers['x-screenpop-signature'] ?? '');
      const key = String(req.headers['idempotency-key'] ?? '');
      const fresh =
        /^\d+$/.test(timestamp) && Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
      const expected = Buffer.from(
        `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${raw}`).digest('hex')}`,
      );
      const signed =
        Buffer.byteLength(given) === expected.length &&
        timingSafeEqual(Buffer.from(given), expected);
      if (req.method !== 'POST' || !fresh || !signed || !key) {
        refused.push(`${req.method} fresh=${fresh} signed=${signed} key=${key}`);
        res.writeHead(401).end();
        return;
      }
      const body = JSON.parse(raw) as Record<string, unknown>;
      const had = stored.get(key);
      if (!had || Number(body.revision) > Number(had.revision)) stored.set(key, body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/screenpop/calls`,
    requests,
    refused,
    stored,
  };
}

function run(args: string[], env: Record<string, string>) {
  const proc: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, ...args], {
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let out = '';
  createInterface({ input: proc.stdout }).on('line', (l) => {
    out += `${l}\n`;
    lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  cleanup.push(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  return { proc, lines, stdout: () => out, stderr: () => err, exit };
}

it.each(['--crm-log-secret-file', 'SCREENPOP_CRM_LOG_SECRET'] as const)(
  '--crm-log-url with the secret from %s: each call POSTed once to a local receiver, signed as documented',
  async (from) => {
    const sim = await startSimulator();
    cleanup.push(() => sim.close());
    const dir = mkdtempSync(join(tmpdir(), 'runner-crm-log-generic-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const secretFile = join(dir, 'call-log-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    const receiver = await startReceiver(SECRET);

    const child = run(
      [
        '--base-url',
        sim.baseUrl,
        '--extension',
        '101',
        '--crm',
        'generic',
        // The lookup goes nowhere (nothing listens there); only the call log is tested here.
        '--crm-url',
        'https://127.0.0.1:9/lookup?phone={number}',
        '--crm-auth',
        'none',
        '--crm-log',
        'answered-and-missed',
        '--crm-log-folder',
        join(dir, 'call-log'),
        '--crm-log-url',
        receiver.url,
        ...(from === '--crm-log-secret-file' ? ['--crm-log-secret-file', secretFile] : []),
      ],
      {
        SCREENPOP_API_KEY: sim.apiKey.key,
        SCREENPOP_API_SECRET: sim.apiKey.secret,
        ...(from === 'SCREENPOP_CRM_LOG_SECRET' ? { SCREENPOP_CRM_LOG_SECRET: SECRET } : {}),
      },
    );
    const wait = { timeoutMs: 15_000, detail: () => `stderr:\n${child.stderr()}` };
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      wait,
    );
    // Not on the command line (what `ps` shows every user of the machine).
    if (child.proc.pid)
      expect(readFileSync(`/proc/${child.proc.pid}/cmdline`, 'utf8')).not.toContain(SECRET);

    const calls: Array<{ id: string; from: string; outcome: string }> = [];
    for (const [i, answered] of [true, false, true].entries()) {
      const from = `+1415555${2000 + i}`;
      const id = sim.ring({ from, to: '101' });
      await waitFor(
        () => child.lines.some((l) => l.type === 'pop' && l.call_id === id),
        'pop',
        wait,
      );
      if (answered) {
        sim.setCallState(id, 'answered');
        await new Promise((r) => setTimeout(r, 30));
      }
      sim.setCallState(id, 'ended');
      calls.push({ id, from, outcome: answered ? 'answered' : 'missed' });
    }
    await waitFor(
      () => child.lines.filter((l) => l.type === 'logged').length >= 3,
      '3 logged',
      wait,
    );

    expect(receiver.refused).toEqual([]);
    expect(receiver.requests).toHaveLength(3);
    expect([...receiver.stored.keys()].sort()).toEqual(calls.map((c) => c.id).sort());
    for (const c of calls)
      expect(receiver.stored.get(c.id)).toMatchObject({
        version: 1,
        callId: c.id,
        direction: 'inbound',
        from: c.from,
        outcome: c.outcome,
      });
    for (const r of receiver.requests) expect(r.headers['content-type']).toBe('application/json');
    expect(
      child.lines
        .filter((l) => l.type === 'logged')
        .map((l) => ({ call_id: l.call_id, crm: l.crm }))
        .sort((a, b) => String(a.call_id).localeCompare(String(b.call_id))),
    ).toEqual(
      calls
        .map((c) => ({ call_id: c.id, crm: 'generic' }))
        .sort((a, b) => a.call_id.localeCompare(b.call_id)),
    );
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
    // Only the signature left; the secret is in no line the runner wrote.
    expect(child.stdout()).not.toContain(SECRET);
    expect(child.stderr()).not.toContain(SECRET);
  },
  40_000,
);

it('refuses a receiver over plain http to another computer, and a secret file it cannot read, in words (exit 2)', async () => {
  const base = ['--base-url', 'https://acme.example.com', '--extension', '101'];
  const generic = [
    '--crm',
    'generic',
    '--crm-url',
    'https://crm.acme.example/api?phone={number}',
    '--crm-log',
    'answered',
  ];
  const insecure = run([...base, ...generic, '--crm-log-url', 'http://calls.acme.example/in'], {
    SCREENPOP_API_KEY: 'k',
    SCREENPOP_API_SECRET: 's',
  });
  expect(await insecure.exit).toBe(2);
  expect(insecure.stderr()).toContain(
    '--crm-log-url: must start with https:// (http:// is allowed only for localhost or 127.0.0.1)',
  );
  const missing = join(tmpdir(), `no-such-secret-${process.pid}`);
  const unreadable = run(
    [
      ...base,
      ...generic,
      '--crm-log-url',
      'https://calls.acme.example/in',
      '--crm-log-secret-file',
      missing,
    ],
    { SCREENPOP_API_KEY: 'k', SCREENPOP_API_SECRET: 's' },
  );
  expect(await unreadable.exit).toBe(2);
  expect(unreadable.stderr()).toContain(
    `the call log’s signing secret could not be read from ${missing}: ENOENT`,
  );
}, 30_000);
