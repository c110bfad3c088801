/**
 * The runner's administrator commands as child processes: the policy read by the runner (a lock
 * wins over a flag, its API key stands in for SCREENPOP_API_KEY), `--store-secret` into a REAL
 * gnome-keyring (private D-Bus session, temporary HOME) with the secret on stdin, then
 * `--diagnostics` in the same keyring testing the connection against the simulator with that
 * secret and writing an archive that `tar` unpacks and that holds no secret.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { childEnv } from '../support/child-env.ts';
import { useTempDir } from '../support/temp-dir.ts';

const CLI = 'src-main/headless/cli.ts';
const tmp = useTempDir('screenpop-admin-');
const sims: Simulator[] = [];
afterEach(async () => {
  for (const s of sims.splice(0)) await s.close();
});

const missing = ['dbus-run-session', 'gnome-keyring-daemon'].filter(
  (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
);
const skipKeyring = missing.length > 0 && process.env.CI !== 'true';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` with `input` on stdin; killed after 30 s. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

async function simAndPolicy(extra: object = {}) {
  const sim = await startSimulator();
  sims.push(sim);
  const policy = join(tmp.path, 'policy.json');
  await writeFile(
    policy,
    JSON.stringify({
      managedBy: 'Acme IT',
      settings: { baseUrl: sim.baseUrl, apiKey: sim.apiKey.key, extensions: ['101'] },
      locked: ['baseUrl', 'apiKey'],
      ...extra,
    }),
  );
  return { sim, policy };
}

describe('screenpop-headless for administrators', () => {
  it('reads the policy: a locked address wins over --base-url, the policy key stands in for SCREENPOP_API_KEY', async () => {
    const { sim, policy } = await simAndPolicy();
    const child = spawn(
      process.execPath,
      [
        CLI,
        '--policy',
        policy,
        '--base-url',
        'https://elsewhere.example.org',
        '--extension',
        '101',
      ],
      {
        env: childEnv({ SCREENPOP_API_SECRET: sim.apiKey.secret }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !out.includes('"state":"connected"'))
      await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    expect(out, err).toContain('"state":"connected"');
    expect(err).toContain('the policy locks this setting');
    expect(err).toContain('"setting":"baseUrl"');
    expect(err).not.toContain(sim.apiKey.secret);
  });

  it('runs the policy’s programs once per ringing call, with the call’s values as single arguments', async () => {
    const out = join(tmp.path, 'argv.jsonl');
    const program = join(tmp.path, 'record-args');
    await writeFile(
      program,
      `#!${process.execPath}\nrequire('fs').appendFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`,
    );
    await chmod(program, 0o755);
    const { sim, policy } = await simAndPolicy({
      onRing: [
        { run: program, args: ['--from', '{from}', '--name={caller_name}', '{call_id}'] },
        { openUrl: 'https://intranet.example.com/?n={from}' },
      ],
    });
    const child = spawn(process.execPath, [CLI, '--policy', policy], {
      env: childEnv({ SCREENPOP_API_SECRET: sim.apiKey.secret }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const until = async (what: () => boolean, label: string) => {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !what()) await new Promise((r) => setTimeout(r, 50));
      expect(what(), `${label}\n${stderr}`).toBe(true);
    };
    await until(() => stdout.includes('"state":"connected"'), 'connected');
    const colleague = sim.extensions.find((e) => e.number !== '101')!;
    const call = sim.ring({ from: colleague.number, to: '101' });
    const lines = async () =>
      (await readFile(out, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    let recorded: string[] = [];
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && recorded.length === 0) {
      recorded = await lines();
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 500)); // a second run would have landed by now
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    recorded = await lines();
    expect(recorded.map((l) => JSON.parse(l) as string[])).toEqual([
      ['--from', colleague.number, `--name=${colleague.caller_id_name}`, call],
    ]);
  });

  it('names each bad policy field on stderr, never its value, and runs with the rest', async () => {
    const { sim, policy } = await simAndPolicy({ settings: { baseUrl: 'ftp://x', sound: 7 } });
    // The policy is read (and its refusals said) before the flags are checked; a usage error
    // then ends the run at once. (--help reads nothing: it only prints the help.)
    const r = await run(
      process.execPath,
      [CLI, '--policy', policy, '--base-url', sim.baseUrl, '--heartbeat-sec', '1'],
      childEnv(),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"field":"settings.baseUrl"');
    expect(r.stderr).toContain('"field":"settings.sound"');
    expect(r.stderr).not.toContain('ftp://x');
  });

  it.skipIf(skipKeyring)(
    '--store-secret puts the secret from stdin in a real keychain; --diagnostics then tests with it and writes the archive',
    async () => {
      expect(missing, `CI must provide ${missing.join(', ')}`).toEqual([]);
      const { sim, policy } = await simAndPolicy();
      const home = join(tmp.path, 'home');
      await mkdir(join(home, 'run'), { recursive: true, mode: 0o700 });
      const archive = join(tmp.path, 'diag.tar.gz');
      // One D-Bus session and keyring for both commands; the secret only ever on stdin.
      const script =
        'printf pw | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null; ' +
        '"$0" "$1" --policy "$2" --store-secret || exit 10; ' +
        'exec "$0" "$1" --policy "$2" --diagnostics "$3" </dev/null';
      const r = await run(
        'dbus-run-session',
        ['--', 'sh', '-c', script, process.execPath, CLI, policy, archive],
        {
          PATH: process.env.PATH,
          HOME: home,
          XDG_RUNTIME_DIR: join(home, 'run'),
          XDG_DATA_HOME: join(home, '.local', 'share'),
        },
        `${sim.apiKey.secret}\n`,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`the API secret for ${sim.apiKey.key}@`);
      expect(r.stderr).toContain('(connection test: passed)');
      const dir = join(tmp.path, 'unpacked');
      await mkdir(dir);
      execFileSync('tar', ['-xzf', archive, '-C', dir]);
      const names = (await readdir(join(dir, 'screenpop-diagnostics'))).sort();
      expect(names).toEqual([
        'README.txt',
        'about.json',
        'call-log.json',
        'connection-test.json',
        'connection.json',
        'log.jsonl',
        'network.json',
        'policy.json',
        'settings.json',
      ]);
      // The call-log queue's section: its counts (no queue folder here: nothing queued).
      expect(
        JSON.parse(await readFile(join(dir, 'screenpop-diagnostics', 'call-log.json'), 'utf8')),
      ).toMatchObject({ pending: 0, logged: 0, failed: 0, calls: [] });
      const text = (
        await Promise.all(names.map((n) => readFile(join(dir, 'screenpop-diagnostics', n), 'utf8')))
      ).join('\n');
      expect(text).not.toContain(sim.apiKey.secret);
      expect(
        JSON.parse(
          await readFile(join(dir, 'screenpop-diagnostics', 'connection-test.json'), 'utf8'),
        ),
      ).toMatchObject({
        result: { ok: true },
      });
      expect(text).toContain('holds the API secret for this key');
      expect(text).toContain('Acme IT');
      // The proxy and certificate decisions of the test's own connection.
      expect(
        JSON.parse(await readFile(join(dir, 'screenpop-diagnostics', 'network.json'), 'utf8')),
      ).toMatchObject({ proxySource: expect.any(String) });
    },
  );

  it('--store-secret refuses an empty stdin and says what is missing', async () => {
    const r = await run(
      process.execPath,
      [
        CLI,
        '--policy',
        join(tmp.path, 'none.json'),
        '--store-secret',
        '--base-url',
        'https://acme.example.com',
      ],
      childEnv(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the API key and the service address are needed');
  });

  it('--store-secret refuses on a computer the policy puts in organisation mode (no API secret on the desktops)', async () => {
    const policy = join(tmp.path, 'organisation.json');
    await writeFile(
      policy,
      JSON.stringify({
        settings: {
          connectionMode: 'organisation',
          baseUrl: 'https://acme.example.com',
          apiKey: 'ak_acme',
          relayUrl: 'wss://relay.acme.example.com',
          relayTenant: 'acme',
        },
        locked: ['connectionMode'],
      }),
    );
    const r = await run(
      process.execPath,
      [CLI, '--policy', policy, '--store-secret'],
      { PATH: process.env.PATH ?? '' },
      'S3cr3t-value',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the policy sets organisation mode');
    expect(r.stderr).not.toContain('S3cr3t-value');
  });
});
