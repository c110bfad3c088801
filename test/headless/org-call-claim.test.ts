/**
 * Process test: the runner's call log in organisation mode (issue 39 item 5 and its follow-up).
 * Two runners, reception's (103) and sales' (104), enrolled at a relay (users mode, in this
 * process), both logging "answered and missed" calls to a generic receiver on 127.0.0.1: a queue's
 * call that rings on both and nobody takes is claimed at the relay and logged by one runner only,
 * as the tray app does. The runner that holds it is stopped and started again (its call-log folder,
 * where its id for claims is kept, and its credential file kept): when the queue rings the same
 * call again and nobody takes it, that runner claims it again as the same computer ("yours") and
 * updates the logged call; the other runner logs nothing.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { addUser, orgConfig, postAll, startOrgRelay } from '../../rigs/relay/users-support.ts';
import { waitFor } from '../../rigs/wait.ts';
import { childEnv } from '../support/child-env.ts';

const CLI = 'src-main/headless/cli.ts';
const SECRET = 'whsec-org-claims-7c41e0';
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A receiver of the generic call log: every POST kept in order (its Idempotency-Key and body). */
async function startReceiver() {
  const posts: Array<{ key: string; body: Record<string, unknown> }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      posts.push({ key: String(req.headers['idempotency-key'] ?? ''), body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/calls`, posts };
}

function run(name: string, args: string[]) {
  const proc: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, ...args], {
    env: childEnv({ SCREENPOP_CRM_LOG_SECRET: SECRET }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  createInterface({ input: proc.stdout }).on('line', (l) => {
    lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  cleanup.push(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  const stderr = () => err;
  return { name, proc, lines, stderr, exit };
}

type Runner = ReturnType<typeof run>;

const logged = (r: Runner, callId: string) =>
  r.lines.filter((l) => l.type === 'logged' && l.call_id === callId);

it('a queue’s call missed on two users’ runners is logged by one; restarted, that runner claims it again as itself', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-org-claim-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const org = await startOrgRelay(orgConfig(join(dir, 'users.json')));
  cleanup.push(() => org.close());
  const receiver = await startReceiver();
  const codes = {
    reception: await addUser(org.users, 'reception', ['103']),
    sales: await addUser(org.users, 'sales', ['104']),
  };
  const argsOf = (user: 'reception' | 'sales', enrol: boolean) => {
    const codeFile = join(dir, `${user}.code`);
    if (enrol) writeFileSync(codeFile, `${codes[user]}\n`, { mode: 0o600 });
    return [
      '--relay-url',
      org.relay.url.replace(/^http/, 'ws'),
      '--relay-tenant',
      'acme',
      '--credential-file',
      join(dir, `${user}.credential.json`),
      ...(enrol ? ['--enrol-file', codeFile] : []),
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
      join(dir, `${user}-call-log`),
      '--crm-log-url',
      receiver.url,
    ];
  };
  const detail = (rs: Runner[]) => () =>
    rs
      .map((r) => `${r.name} stdout: ${JSON.stringify(r.lines)}\nstderr:\n${r.stderr()}`)
      .join('\n');
  const connected = async (r: Runner) =>
    waitFor(() => r.lines.some((l) => l.type === 'status' && l.state === 'connected'), r.name, {
      timeoutMs: 20_000,
      detail: detail([r]),
    });
  // The queue rings 103 and 104 with one call; nobody takes it.
  let round = 0;
  const missed = async (callId: string, runners: Runner[]) => {
    round++;
    const post = (to: string, state: string) =>
      postAll(org.relay.webhookUrl('acme'), [
        JSON.stringify({
          event: 30011,
          timestamp: Date.now(),
          tenant: 'acme',
          event_id: `${callId}-${to}-${state}-${round}`,
          data: { call_id: callId, from: '+442071234567', to, state },
        }),
      ]);
    await post('103', 'ringing');
    await post('104', 'ringing');
    for (const r of runners)
      await waitFor(
        () =>
          r.lines.some((l) => l.type === 'pop' && String(l.event_id).endsWith(`-ringing-${round}`)),
        `${r.name} pops`,
        { timeoutMs: 10_000, detail: detail(runners) },
      );
    await post('103', 'ended');
    await post('104', 'ended');
  };

  const reception = run('reception', argsOf('reception', true));
  const sales = run('sales', argsOf('sales', true));
  await connected(reception);
  await connected(sales);

  await missed('q-1', [reception, sales]);
  await waitFor(() => receiver.posts.length >= 1, 'the missed call logged', {
    timeoutMs: 10_000,
    detail: detail([reception, sales]),
  });
  await new Promise((r) => setTimeout(r, 600));
  // Once, by one runner (without claims, each runner logged it: two POSTs).
  expect(receiver.posts.map((p) => [p.key, p.body.outcome])).toEqual([['q-1', 'missed']]);
  const holder = logged(reception, 'q-1').length === 1 ? reception : sales;
  const other = holder === reception ? sales : reception;
  await waitFor(() => logged(holder, 'q-1').length === 1, 'the holder’s logged line', {
    detail: detail([holder]),
  });
  expect(logged(other, 'q-1')).toEqual([]);

  // The holder stops and starts again (no new enrolment: its credential file; its call-log folder).
  holder.proc.kill('SIGTERM');
  expect(await holder.exit).toBe(0);
  const user = holder === reception ? 'reception' : 'sales';
  const again = run(`${user} again`, argsOf(user, false));
  await connected(again);

  // The queue rings the same call again, and again nobody takes it: the restarted runner claims
  // it as the same computer and updates the call it logged; the other runner logs nothing.
  await missed('q-1', [again, other]);
  await waitFor(() => logged(again, 'q-1').length === 1, 'the restarted runner logs it again', {
    timeoutMs: 10_000,
    detail: detail([again, other]),
  });
  expect(logged(again, 'q-1')[0]).toMatchObject({ crm: 'generic', how: 'updated' });
  expect(logged(other, 'q-1')).toEqual([]);
  expect(receiver.posts.map((p) => p.key)).toEqual(['q-1', 'q-1']);
  for (const r of [again, other]) r.proc.kill('SIGTERM');
  expect(await again.exit).toBe(0);
  expect(await other.exit).toBe(0);
}, 60_000);
