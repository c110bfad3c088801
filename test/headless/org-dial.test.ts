/**
 * Process test: `screenpop-headless dial <number>` in organisation mode (issue 38 items 1 and 5),
 * the built runner against a relay that is the gateway of the simulator playing a Yeastar P-Series
 * PBX (users kept in a file, the memory store: rigs/relay/gateway-calls-support.ts). Through a
 * running organisation runner (its control socket, its relay-backed CallControl: the ring that
 * follows is its `calling` line, never a pop); without one, with the device credential the runner
 * kept (no new enrolment); always from the user's own extension; exit codes 0, 1, 2.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { envWithout, ProcessGroup } from '../../rigs/processes.ts';
import {
  startGatewayCallsRig,
  type GatewayCallsRig,
} from '../../rigs/relay/gateway-calls-support.ts';
import { addUser } from '../../rigs/relay/users-support.ts';
import { waitFor } from '../../rigs/wait.ts';

const group = new ProcessGroup();
const rigs: GatewayCallsRig[] = [];
afterEach(async () => {
  await group.cleanup();
  for (const r of rigs.splice(0)) await r.close();
});

type Line = Record<string, unknown>;

function lines(texts: Array<{ text: string }>): Line[] {
  return texts.map((l) => JSON.parse(l.text) as Line);
}

describe('screenpop-headless dial in organisation mode', () => {
  it('dials through a running runner (calling, no pop), then with the kept credential alone; never as a colleague', async () => {
    const dir = group.tempDir('org-dial-');
    const xdg = join(dir, 'xdg');
    const r = await startGatewayCallsRig(dir);
    rigs.push(r);
    const mine = r.sim.extensions[0]!.number;
    const colleague = r.sim.extensions[1]!.number;
    await addUser(r.users, 'bob', [colleague], [], null, r.tenant);
    const code = await addUser(r.users, 'alice', [mine], [], null, r.tenant);
    const codeFile = join(dir, 'enrol.code');
    writeFileSync(codeFile, `${code}\n`, { mode: 0o600 });
    mkdirSync(xdg, { mode: 0o700 });
    const env = {
      ...envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']),
      XDG_RUNTIME_DIR: xdg,
    };
    const org = [
      '--relay-url',
      r.relay.url.replace(/^http/, 'ws'),
      '--relay-tenant',
      r.tenant,
      '--credential-file',
      join(dir, 'credential.json'),
      '--region',
      'US',
    ];
    const dial = async (name: string, args: string[]) => {
      const proc = group.spawnRunner(name, ['dial', ...args, ...org], { env });
      const { code: exit } = await proc.exit;
      return { exit, out: lines(proc.stdout), said: proc.describe() };
    };

    const runner = group.spawnRunner('runner', [...org, '--enrol-file', codeFile], { env });
    await waitFor(
      () => lines(runner.stdout).some((l) => l.type === 'status' && l.state === 'connected'),
      'the runner connected',
      { timeoutMs: 60_000 },
    );

    // Through the running runner: its sign-in, its `calling` line, no pop.
    const first = await dial('dial-runner', ['(415) 555-0199']);
    expect(first.exit, first.said).toBe(0);
    expect(first.out).toEqual([{ type: 'dial', call_id: expect.any(String), via: 'runner' }]);
    const callId = first.out[0]!.call_id as string;
    await waitFor(() => r.rang.get(callId)?.[0] === mine, 'the PBX rings alice first', {
      timeoutMs: 10_000,
    });
    await waitFor(
      () => lines(runner.stdout).some((l) => l.type === 'calling' && l.call_id === callId),
      'the calling line',
      { timeoutMs: 10_000 },
    );
    expect(lines(runner.stdout).filter((l) => l.type === 'pop')).toEqual([]);

    // The colleague's extension named as this user's own: the relay still dials from alice's.
    const asColleague = await dial('dial-colleague', ['4155550100', '--extension', colleague]);
    expect(asColleague.exit, asColleague.said).toBe(0);
    const otherId = asColleague.out[0]!.call_id as string;
    await waitFor(() => r.rang.get(otherId) !== undefined, 'the PBX rings', {
      timeoutMs: 10_000,
    });
    expect(r.rang.get(otherId)![0]).toBe(mine);
    expect(r.rang.get(otherId)).not.toContain(colleague);

    expect((await runner.stop()).code).toBe(0);

    // No runner: the credential it kept, no new enrolment (the code is spent).
    const own = await dial('dial-own', ['4155550123']);
    expect(own.exit, own.said).toBe(0);
    expect(own.out).toEqual([{ type: 'dial', call_id: expect.any(String), via: 'own' }]);
    await waitFor(
      () => r.rang.get(own.out[0]!.call_id as string)?.[0] === mine,
      'the PBX rings alice',
      { timeoutMs: 10_000 },
    );

    // A number that is not dialable: refused in words, exit 1; no number at all: usage, exit 2.
    const bad = await dial('dial-bad', ['javascript:alert(1)']);
    expect(bad.exit, bad.said).toBe(1);
    expect(bad.out[0]).toMatchObject({ type: 'dial-refused', refusal: 'invalid-number' });
    const none = group.spawnRunner('dial-none', ['dial', ...org], { env });
    expect((await none.exit).code).toBe(2);
  }, 60_000);

  it('without a kept credential: refused as not signed in, exit 1, nothing rings', async () => {
    const dir = group.tempDir('org-dial-none-');
    const r = await startGatewayCallsRig(dir);
    rigs.push(r);
    const env = {
      ...envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']),
      XDG_RUNTIME_DIR: dir,
    };
    const proc = group.spawnRunner(
      'dial-unsigned',
      [
        'dial',
        '4155550199',
        '--relay-url',
        r.relay.url.replace(/^http/, 'ws'),
        '--relay-tenant',
        r.tenant,
        '--credential-file',
        join(dir, 'credential.json'),
      ],
      { env },
    );
    expect((await proc.exit).code, proc.describe()).toBe(1);
    const out = lines(proc.stdout);
    expect(out).toEqual([expect.objectContaining({ type: 'dial-refused', via: 'own' })]);
    expect(JSON.stringify(out[0])).toContain('Not signed in to your organisation');
    expect(r.rang.size).toBe(0);
  }, 30_000);

  it('says each refusal in words, exit 1: rate-limited, user revoked, relay unreachable', async () => {
    const dir = group.tempDir('org-dial-refusals-');
    const r = await startGatewayCallsRig(dir, { rate: { burst: 1, perMinute: 1 } });
    rigs.push(r);
    const mine = r.sim.extensions[0]!.number;
    const codeFile = join(dir, 'enrol.code');
    writeFileSync(codeFile, `${await addUser(r.users, 'alice', [mine], [], null, r.tenant)}\n`, {
      mode: 0o600,
    });
    const env = {
      ...envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']),
      XDG_RUNTIME_DIR: dir,
    };
    const org = [
      '--relay-url',
      r.relay.url.replace(/^http/, 'ws'),
      '--relay-tenant',
      r.tenant,
      '--credential-file',
      join(dir, 'credential.json'),
    ];
    // Enrolled once by a run, which stops: the dials below have no runner to go through.
    const runner = group.spawnRunner('enrol', [...org, '--enrol-file', codeFile], { env });
    await waitFor(
      () => lines(runner.stdout).some((l) => l.type === 'status' && l.state === 'connected'),
      'the runner connected',
      { timeoutMs: 60_000 },
    );
    expect((await runner.stop()).code).toBe(0);
    const dial = async (name: string) => {
      const proc = group.spawnRunner(name, ['dial', '4155550199', ...org], { env });
      const { code } = await proc.exit;
      return { code, out: lines(proc.stdout), said: proc.describe() };
    };
    const placed = await dial('dial-1');
    expect(placed.code, placed.said).toBe(0);
    const limited = await dial('dial-2');
    expect(limited.code, limited.said).toBe(1);
    expect(limited.out).toEqual([
      {
        type: 'dial-refused',
        refusal: 'rate-limited',
        reason: 'Too many call requests just now; try again in a moment.',
        via: 'own',
      },
    ]);
    await r.users.revoke(r.tenant, 'alice', Date.now());
    const revoked = await dial('dial-revoked');
    expect(revoked.code, revoked.said).toBe(1);
    expect(revoked.out).toEqual([
      {
        type: 'dial-refused',
        // A revoked user's device credential is deleted with the user: the relay answers 46001,
        // as for an unknown device (docs/relay-protocol.md, the call route's 401).
        refusal: 'sign-in-expired',
        reason:
          'Your sign-in to your organisation has expired: sign in again (Screenpop renews it on the next try where it can).',
        via: 'own',
      },
    ]);
    await r.relay.close();
    const gone = await dial('dial-gone');
    expect(gone.code, gone.said).toBe(1);
    expect(gone.out).toEqual([
      {
        type: 'dial-refused',
        refusal: 'unreachable',
        reason: 'The phone system could not be reached to place the call.',
        via: 'own',
      },
    ]);
  }, 60_000);
});
