/**
 * A newcomer's machine without libsecret's development files (a fresh desktop or server image):
 * a fresh copy of this checkout is installed with `npm ci` (README's one install command) while
 * pkg-config cannot find libsecret, so keytar's build from source fails, as it does there. keytar is an optional
 * dependency: the install must succeed without it, the demo must ring, and the runner must say
 * what is missing when it needs the keychain. Prints the install's time and size.
 *
 * Its own script, not part of npm test (a whole install takes a minute or two):
 *   npm run test:install     (.ci/run runs it; it uses npm's cache, so it runs offline once
 *                             `npm ci` has filled it)
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userEnv } from '../support/run-quiet.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const copy = mkdtempSync(join(tmpdir(), 'screenpop-fresh-'));
/** Where pkg-config looks: nowhere, so libsecret-1's development files are not found. */
const HIDE_LIBSECRET = { PKG_CONFIG_LIBDIR: '/nonexistent', PKG_CONFIG_PATH: '/nonexistent' };

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    });
  });
}

let install: { code: number | null; output: string; ms: number };

beforeAll(async () => {
  // The checkout as git has it (tracked files and new ones not ignored), without node_modules.
  const files = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  )
    .split('\0')
    .filter((f) => f && existsSync(join(ROOT, f)));
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(ROOT, file), join(copy, file));
  }
  install = await run(
    'npm',
    ['ci', '--prefer-offline', '--no-audit', '--no-fund'],
    // As .ci/run: the native modules build from source (no prebuilt binary is reachable), here
    // without libsecret. prebuild-install (keytar's and kerberos's install step) reads this
    // variable as one package name or `true`, not a list: 'keytar' sent kerberos to GitHub for its
    // prebuilt binary first (offline: a wait, then node-gyp), unlike CI's own install.
    { ...userEnv(), ...HIDE_LIBSECRET, npm_config_build_from_source: 'true' },
    15 * 60_000,
  );
  const size = execFileSync('du', ['-sk', join(copy, 'node_modules')], { encoding: 'utf8' });
  console.info(
    `fresh install without libsecret: npm ci exited ${install.code} in ${(install.ms / 1000).toFixed(1)} s; node_modules ${(Number(size.split('\t')[0]) / 1024).toFixed(0)} MiB`,
  );
}, 16 * 60_000);

afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('npm ci on a machine without libsecret', () => {
  it('succeeds, without keytar', () => {
    expect(install.code, install.output.slice(-4000)).toBe(0);
    expect(existsSync(join(copy, 'node_modules', 'keytar'))).toBe(false);
  });

  it('npm run headless -- --demo rings', async () => {
    const demo = spawn('npm', ['run', '-s', 'headless', '--', '--demo'], {
      cwd: copy,
      env: userEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    try {
      const popped = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no pop line in 60 s:\n${out}`)), 60_000);
        demo.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.includes('"type":"pop"'));
          if (line) {
            clearTimeout(timer);
            resolve(line);
          }
        });
      });
      expect(JSON.parse(popped)).toMatchObject({ type: 'pop' });
    } finally {
      if (demo.pid) process.kill(-demo.pid, 'SIGTERM');
    }
  }, 90_000);

  it('the runner that needs the keychain says what is missing and what to install', async () => {
    const result = await run(
      'npm',
      ['run', '-s', 'headless', '--', '--base-url', 'http://127.0.0.1:9', '--extension', '101'],
      { ...userEnv(), SCREENPOP_API_KEY: 'k3y', LANG: 'C' },
      60_000,
    );
    expect(result.code).toBe(2);
    expect(result.output).toContain('The keychain module (keytar) is not installed');
    if (process.platform === 'linux') expect(result.output).toContain('libsecret-1-dev');
  }, 90_000);
});
