/**
 * KeytarCredentialStore against a REAL Secret Service: each test spawns a child under its own
 * `dbus-run-session` with a fresh, unlocked gnome-keyring in a temporary HOME, so nothing touches
 * the developer's keychain. Locally, missing tools skip with the reason; in CI they fail.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  KeychainUnavailableError,
  KeytarCredentialStore,
} from '../../src-main/core/credentials/keytar-store.ts';

const CHILD = fileURLToPath(new URL('./keytar-child.ts', import.meta.url));

function missingTools(): string[] {
  return ['dbus-run-session', 'gnome-keyring-daemon'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
  );
}

const missing = missingTools();
const inCi = process.env.CI === 'true';
if (missing.length > 0 && !inCi) {
  console.warn(
    `keytar-store.test.ts: skipping the real-keychain tests: ${missing.join(' and ')} not found ` +
      '(apt-get install dbus gnome-keyring libsecret-1-0)',
  );
}

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function privateHome(): Promise<{ home: string; runtime: string }> {
  const home = await mkdtemp(join(tmpdir(), 'screenpop-keyring-'));
  dirs.push(home);
  const runtime = join(home, 'run');
  await mkdir(runtime, { mode: 0o700 });
  return { home, runtime };
}

/** Runs the child script in a private D-Bus session with an unlocked gnome-keyring; bounded by a time-out. */
async function runInKeyring(account: string, secret: string): Promise<ChildResult> {
  const { home, runtime } = await privateHome();
  const script =
    'printf pw | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null; ' +
    'exec "$0" "$1" "$2"';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    XDG_DATA_HOME: join(home, '.local', 'share'),
    SCREENPOP_TEST_SECRET: secret,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(
      'dbus-run-session',
      ['--', 'sh', '-c', script, process.execPath, CHILD, account],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function lastJsonLine(stdout: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as Record<string, unknown>;
}

describe('KeytarCredentialStore with a real gnome-keyring', () => {
  it.skipIf(missing.length > 0 && !inCi)(
    'stores, reads, overwrites and deletes a secret',
    async () => {
      expect(missing, `CI must provide ${missing.join(', ')}`).toEqual([]);
      const secret = `s3cr3t-${Date.now()}`;
      const result = await runInKeyring('k3y@acme.example.com', secret);
      expect(result.code, result.stderr).toBe(0);
      expect(lastJsonLine(result.stdout)).toEqual({
        before: null,
        afterSet: secret,
        afterOverwrite: `${secret}-2`,
        otherAccount: null,
        deleted: true,
        afterDelete: null,
        deletedAgain: false,
      });
      // the child's stderr (D-Bus chatter) never carries the secret
      expect(result.stderr).not.toContain(secret);
    },
  );

  it.skipIf(missing.length > 0 && !inCi)(
    'a fresh keyring does not hold the secret of another session',
    async () => {
      const a = await runInKeyring('same@acme.example.com', 'first-secret-1');
      const b = await runInKeyring('same@acme.example.com', 'second-secret-2');
      expect(lastJsonLine(a.stdout).before).toBeNull();
      expect(lastJsonLine(b.stdout).before).toBeNull();
    },
  );
});

describe('KeytarCredentialStore without a usable keychain', () => {
  it('a machine where keytar cannot load gets a clear error, not a crash at import', async () => {
    const store = new KeytarCredentialStore({
      load: () => Promise.reject(new Error('libsecret-1.so.0: cannot open shared object file')),
    });
    const err = await store.getSecret('k@h').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeychainUnavailableError);
    expect((err as Error).message).toMatch(/keytar could not be loaded \(libsecret-1\.so\.0/);
  });

  it('a keychain that errors gets a clear error without the secret', async () => {
    const secret = 'never-show-me-123';
    const store = new KeytarCredentialStore({
      load: async () => ({
        getPassword: async () => null,
        setPassword: async () => {
          throw new Error('Cannot autolaunch D-Bus without X11 $DISPLAY');
        },
        deletePassword: async () => false,
      }),
    });
    const err = (await store.setSecret('k@h', secret).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(KeychainUnavailableError);
    expect(err.message).toMatch(/could not store the API secret in the system keychain/);
    expect(err.message).not.toContain(secret);
  });

  it('the real keytar with no Secret Service reachable reports it in plain words', async () => {
    const { home } = await privateHome();
    const result = spawnSync(process.execPath, [CHILD, 'k@h'], {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        DBUS_SESSION_BUS_ADDRESS: `unix:path=${home}/no-bus`,
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    const out = lastJsonLine(result.stdout);
    expect(out.error).toMatchObject({ name: 'KeychainUnavailableError' });
    expect((out.error as { message: string }).message).toMatch(/system keychain/);
  });
});
