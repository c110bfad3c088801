/**
 * Black-box: `screenpop-headless dial <number>` as it ships (the built runner) against the
 * simulator playing a Yeastar P-Series PBX (its call API: docs/phone-systems/yeastar-p-series.md
 * section 10). One JSON line on stdout and the exit code: 0 placed, 1 refused (10005, an
 * unreachable PBX, a number that is not dialable), 2 a usage error; and with a runner already
 * running for this user, its sign-in (no token of the dial's own) and its `calling` line instead
 * of a pop.
 */
import { chmodSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessGroup, freePort, type Spawned } from '../../rigs/processes.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { childEnv } from '../support/child-env.ts';
import { waitFor } from '../../rigs/wait.ts';

const group = new ProcessGroup();
const sims: Simulator[] = [];
afterEach(async () => {
  await group.cleanup();
  for (const s of sims.splice(0)) await s.close();
});

async function yeastar(): Promise<Simulator> {
  const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 4 });
  sims.push(sim);
  return sim;
}

/** The user's own runtime folder (XDG_RUNTIME_DIR), 0700 as systemd makes it. */
function runtimeDir(): string {
  const dir = group.tempDir('dial-core-xdg-');
  chmodSync(dir, 0o700);
  return dir;
}

function flags(baseUrl: string, extra: string[] = []): string[] {
  return [
    '--base-url',
    baseUrl,
    '--phone-system',
    'yeastar-p-series',
    '--extension',
    '101',
    '--region',
    'US',
    ...extra,
  ];
}

async function dial(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; proc: Spawned }> {
  const proc = group.spawnRunner('dial', args, { env: childEnv(env) });
  const { code } = await proc.exit;
  return {
    code,
    lines: proc.stdout.map((l) => JSON.parse(l.text) as Record<string, unknown>),
    proc,
  };
}

describe('screenpop-headless dial', () => {
  it('places the call with its own sign-in, prints the call id, exits 0 and revokes its token', async () => {
    const sim = await yeastar();
    const env = {
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
      XDG_RUNTIME_DIR: runtimeDir(),
    };
    const r = await dial(['dial', '(415) 555-0199', ...flags(sim.baseUrl)], env);
    expect(r.code, r.proc.describe()).toBe(0);
    expect(r.lines).toEqual([{ type: 'dial', call_id: expect.any(String), via: 'own' }]);
    expect(sim.stats()).toMatchObject({ getToken: 1, delToken: 1 });
    expect(r.proc.stderr()).not.toContain(sim.apiKey.secret);
  }, 30_000);

  it('10005 (the application lacks the permission): a dial-refused line naming it, exit 1', async () => {
    const sim = await yeastar();
    const key = sim.createApiKey({ scopes: ['extension:read', 'event:*'] });
    const r = await dial(['dial', '2008', ...flags(sim.baseUrl)], {
      SCREENPOP_API_KEY: key.key,
      SCREENPOP_API_SECRET: key.secret,
      XDG_RUNTIME_DIR: runtimeDir(),
    });
    expect(r.code, r.proc.describe()).toBe(1);
    expect(r.lines).toEqual([
      {
        type: 'dial-refused',
        refusal: 'permission',
        reason: expect.stringMatching(/lacks the permission to control calls/),
        via: 'own',
      },
    ]);
  }, 30_000);

  it('an unreachable PBX and a number that is not dialable are refusals (exit 1); no number is a usage error (exit 2)', async () => {
    const port = await freePort();
    const env = {
      SCREENPOP_API_KEY: 'k',
      SCREENPOP_API_SECRET: 's',
      XDG_RUNTIME_DIR: runtimeDir(),
    };
    const down = await dial(['dial', '2008', ...flags(`http://127.0.0.1:${port}`)], env);
    expect(down.code, down.proc.describe()).toBe(1);
    expect(down.lines).toMatchObject([{ type: 'dial-refused', refusal: 'unreachable' }]);

    const sim = await yeastar();
    const simEnv = {
      ...env,
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
    };
    const bad = await dial(['dial', 'javascript:alert(1)', ...flags(sim.baseUrl)], simEnv);
    expect(bad.code).toBe(1);
    expect(bad.lines).toMatchObject([{ type: 'dial-refused', refusal: 'invalid-number' }]);
    expect(sim.stats().getToken).toBe(0); // refused before anything was sent

    const usage = await dial(['dial', '--base-url', sim.baseUrl], simEnv);
    expect(usage.code).toBe(2);
    expect(usage.lines).toEqual([]);
    expect(usage.proc.stderr()).toMatch(/dial needs the number to call/);
  }, 30_000);

  it("uses a running runner's sign-in: no token of its own, and that runner prints `calling`, not a pop", async () => {
    const sim = await yeastar();
    const env = {
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
      XDG_RUNTIME_DIR: runtimeDir(),
    };
    const runner = group.spawnRunner('runner', flags(sim.baseUrl), { env: childEnv(env) });
    await waitFor(
      () =>
        runner.stdout.some((l) => l.text.includes('"state":"connected"')) &&
        runner.stderr().includes('serving dial on the control socket'),
      'the runner connected and serving dial',
      { timeoutMs: 10_000, detail: () => runner.describe() },
    );
    const tokensBefore = sim.stats().getToken;
    const r = await dial(['dial', '4155550199', ...flags(sim.baseUrl)], env);
    expect(r.code, r.proc.describe()).toBe(0);
    expect(r.lines).toEqual([{ type: 'dial', call_id: expect.any(String), via: 'runner' }]);
    const callId = r.lines[0]!.call_id as string;
    expect(sim.stats().getToken).toBe(tokensBefore);
    await waitFor(
      () => runner.stdout.some((l) => l.text.includes('"type":"calling"')),
      'the runner said calling',
      { detail: () => runner.describe() },
    );
    const lines = runner.stdout.map((l) => JSON.parse(l.text) as Record<string, unknown>);
    expect(lines).toContainEqual({ type: 'calling', call_id: callId, number: '4155550199' });
    expect(lines.filter((l) => l.type === 'pop')).toEqual([]);
  }, 40_000);
});
