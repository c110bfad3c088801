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
  callProblem,
  KeychainUnavailableError,
  KeytarCredentialStore,
  loadProblem,
} from '../../src-main/core/credentials/keytar-store.ts';

import { keytarMissing } from '../support/keytar.ts';

const CHILD = fileURLToPath(new URL('./keytar-child.ts', import.meta.url));

function missingTools(): string[] {
  return ['dbus-run-session', 'gnome-keyring-daemon'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
  );
}

const noKeytar = keytarMissing();
const missing = [...missingTools(), ...(noKeytar ? [noKeytar] : [])];
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
  it('keytar not installed (an optional dependency that could not be built): says so, with the package to install per OS', async () => {
    const absent = Object.assign(
      new Error(
        "Cannot find package 'keytar' imported from /repo/src-main/core/credentials/keytar-store.ts",
      ),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const linux = new KeytarCredentialStore({
      load: () => Promise.reject(absent),
      platform: 'linux',
    });
    const err = (await linux.check().catch((e: unknown) => e)) as KeychainUnavailableError;
    expect(err).toBeInstanceOf(KeychainUnavailableError);
    expect(err.problem).toBe('not-installed');
    expect(err.message).toMatch(/^The keychain module \(keytar\) is not installed/);
    expect(err.message).toContain('sudo apt-get install libsecret-1-dev');
    expect(err.message).toContain('sudo dnf install libsecret-devel');
    expect(err.message).toContain('npm ci again');
    const mac = new KeytarCredentialStore({
      load: () => Promise.reject(absent),
      platform: 'darwin',
    });
    expect(((await mac.getSecret('k@h').catch((e: unknown) => e)) as Error).message).toContain(
      'xcode-select --install',
    );
    // In the bundle keytar is require()d: Node's CommonJS says it differently.
    expect(
      loadProblem(
        Object.assign(new Error("Cannot find module 'keytar'"), { code: 'MODULE_NOT_FOUND' }),
      ),
    ).toBe('not-installed');
  });

  it('keytar installed but its library missing (libsecret at run time): says which package', async () => {
    const store = new KeytarCredentialStore({
      load: () =>
        Promise.reject(
          Object.assign(
            new Error(
              'libsecret-1.so.0: cannot open shared object file: No such file or directory',
            ),
            {
              code: 'ERR_DLOPEN_FAILED',
            },
          ),
        ),
      platform: 'linux',
    });
    const err = (await store.getSecret('k@h').catch((e: unknown) => e)) as KeychainUnavailableError;
    expect(err.problem).toBe('library-missing');
    expect(err.message).toContain('sudo apt-get install libsecret-1-0');
    expect(err.message).toContain('(libsecret-1.so.0: cannot open shared object file');
    // keytar present, its compiled part not: the library, not the package.
    expect(
      loadProblem(
        Object.assign(new Error("Cannot find module '../build/Release/keytar.node'"), {
          code: 'MODULE_NOT_FOUND',
        }),
      ),
    ).toBe('library-missing');
  });

  it('no Secret Service (no D-Bus session, nothing owning org.freedesktop.secrets) is told apart from a refusal', () => {
    for (const message of [
      'Cannot autolaunch D-Bus without X11 $DISPLAY',
      'Could not connect: No such file or directory',
      'The name org.freedesktop.secrets was not provided by any .service files',
    ])
      expect(callProblem(new Error(message)), message).toBe('no-service');
    for (const message of [
      'Cannot create an item in a locked collection',
      'Object does not exist at path “/org/freedesktop/secrets/collection/login”',
    ])
      expect(callProblem(new Error(message)), message).toBe('refused');
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
      platform: 'linux',
    });
    const err = (await store.setSecret('k@h', secret).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(KeychainUnavailableError);
    expect(err.message).toMatch(/^No keychain service is running in this session\./);
    expect(err.message).toContain('SCREENPOP_API_SECRET');
    expect(err.message).not.toContain(secret);
  });

  it.skipIf(noKeytar !== null && !inCi)(
    'the real keytar with no Secret Service reachable reports it in plain words',
    async () => {
      expect(noKeytar, 'CI installs libsecret-1-dev, so keytar builds').toBeNull();
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
      expect((out.error as { message: string }).message).toMatch(
        /^No keychain service is running in this session\..*\(Could not connect: No such file or directory\)$/,
      );
    },
  );
});
