/**
 * Black box: the real runner on a checkout where keytar is not installed (an optional dependency
 * that could not be built: no libsecret development files). The checkout is a copy of what ships
 * (bin/, the built dist-headless/, package.json) whose node_modules links to every package of this
 * one except keytar, so Node resolves `keytar` exactly as on such a machine. Without
 * SCREENPOP_API_SECRET the runner and `--store-secret` say what is missing and what to install (in
 * the --lang language) and exit; with the secret in the environment, and in demo mode, it works as
 * before.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import {
  ensureRunnerBuilt,
  envWithout,
  NODE,
  ProcessGroup,
  REPO,
  RUNNER,
  until,
} from '../../rigs/processes.ts';

let group: ProcessGroup | undefined;
let sim: Simulator | undefined;
const setup = new ProcessGroup();
let checkout: string;

afterEach(async () => {
  await group?.cleanup();
  group = undefined;
  await sim?.close();
  sim = undefined;
});
afterAll(() => setup.cleanup());

beforeAll(async () => {
  await ensureRunnerBuilt();
  checkout = setup.tempDir('screenpop-no-keytar-');
  for (const part of ['bin', 'dist-headless', 'package.json'])
    cpSync(join(REPO, part), join(checkout, part), { recursive: true });
  mkdirSync(join(checkout, 'node_modules'));
  for (const entry of readdirSync(join(REPO, 'node_modules')))
    if (entry !== 'keytar')
      symlinkSync(join(REPO, 'node_modules', entry), join(checkout, 'node_modules', entry));
});

const plainEnv = () =>
  envWithout(['LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'LANG', 'SCREENPOP_API_SECRET']);

function runner(args: string[], env: NodeJS.ProcessEnv) {
  const g = (group = new ProcessGroup());
  return g.spawn('runner without keytar', NODE, [join(checkout, RUNNER), ...args], {
    env,
    cwd: checkout,
  });
}

describe('the runner where keytar is not installed', () => {
  it('needing the keychain, says what is missing and what to install, and exits 2 before connecting', async () => {
    const proc = runner(['--base-url', 'http://127.0.0.1:9', '--extension', '101'], {
      ...plainEnv(),
      SCREENPOP_API_KEY: 'k3y',
    });
    expect(await proc.exit).toEqual({ code: 2, signal: null });
    expect(proc.stdout).toEqual([]);
    const said = proc.stderr();
    expect(said).toContain(
      'screenpop-headless: The keychain module (keytar) is not installed, so the API secret cannot be stored or read.',
    );
    if (process.platform === 'linux')
      expect(said).toContain('sudo apt-get install libsecret-1-dev');
    expect(said).toContain('SCREENPOP_API_SECRET');
    expect(said).toMatch(/\(Cannot find (package|module) 'keytar'/);
  });

  it('--store-secret says the same in the --lang language, exits 1, and writes the secret nowhere', async () => {
    const g = (group = new ProcessGroup());
    const proc = g.spawn(
      'store-secret without keytar',
      'sh',
      [
        '-c',
        `printf %s 's3cret-nowhere' | "${NODE}" ${RUNNER} --store-secret --base-url https://acme.example.com --lang de`,
      ],
      { env: { ...plainEnv(), SCREENPOP_API_KEY: 'k3y' }, cwd: checkout },
    );
    expect((await proc.exit).code).toBe(1);
    const said = proc.stderr();
    expect(said).toContain(
      'screenpop-headless: das Geheimnis wurde nicht gespeichert: Das Schlüsselbund-Modul',
    );
    expect(said).toContain('Das Schlüsselbund-Modul (keytar) ist nicht installiert');
    expect(said).not.toContain('s3cret-nowhere');
    expect(readdirSync(checkout).sort()).toEqual([
      'bin',
      'dist-headless',
      'node_modules',
      'package.json',
    ]);
  });

  it('with SCREENPOP_API_SECRET, and in demo mode, works as before: a ring is popped', async () => {
    sim = await startSimulator({ extensions: 3 });
    const proc = runner(['--base-url', sim.baseUrl, '--extension', '101'], {
      ...plainEnv(),
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
    });
    const connected = () => proc.stdout.some((l) => l.text.includes('"state":"connected"'));
    await until(connected, 'connected', 20_000, () => proc.describe());
    const callId = sim.ring({ from: '+14155550123', to: '101' });
    await until(
      () => proc.stdout.some((l) => l.text.includes('"type":"pop"') && l.text.includes(callId)),
      'the pop line',
      10_000,
      () => proc.describe(),
    );
    expect((await proc.stop()).code).toBe(0);

    const demo = runner(['--demo'], plainEnv());
    await until(
      () => demo.stdout.some((l) => l.text.includes('"type":"pop"')),
      'a demo pop line',
      30_000,
      () => demo.describe(),
    );
    expect((await demo.stop()).code).toBe(0);
  });
});
