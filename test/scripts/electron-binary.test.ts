/**
 * npm start and npm run dist check for the Electron program before anything else and say in plain
 * words what is missing and how to provide it. The commands themselves are spawned as a user runs
 * them; Electron is played by a stand-in script named by ELECTRON_OVERRIDE_DIST_PATH.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  electronPackageDir,
  electronVersion,
  locateElectron,
} from '../../scripts/electron-binary.ts';
import { findCachedZip, preflight } from '../../scripts/dist.ts';
import { withBuildLock } from '../support/build-lock.ts';
import { useTempDir } from '../support/temp-dir.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const version = electronVersion(electronPackageDir());
const tmp = useTempDir('sp-electron-binary-');

/** A folder laid out like node_modules/electron: package.json, and optionally path.txt + dist/. */
function electronPackage(dir: string, downloaded: boolean): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'electron', version: '45.4.1' }));
  if (downloaded) {
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'path.txt'), 'electron');
    writeFileSync(join(dir, 'dist', 'electron'), '');
    writeFileSync(join(dir, 'dist', 'version'), '45.4.1');
  }
  return dir;
}

/** An unpacked-Electron folder whose `electron` is a shell script recording how it was run. */
function standInElectron(dir: string, exitCode = 0, folderVersion = version): string {
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, 'electron');
  writeFileSync(
    exe,
    `#!/bin/sh\nprintf '%s\\n' "$PWD" "$@" > "${join(dir, 'ran.txt')}"\nexit ${exitCode}\n`,
  );
  chmodSync(exe, 0o755);
  writeFileSync(join(dir, 'version'), folderVersion);
  return dir;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node scripts/<file>` as npm does, with a clean environment plus `env`. */
function runScript(file: string, env: Record<string, string>, args: string[] = []): Promise<Ran> {
  const base: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[key];
    if (value !== undefined) base[key] = value;
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts', file), ...args], {
      cwd: root,
      env: { ...base, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** An http server on 127.0.0.1 answering every request with `status`. */
async function answering(status: number): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(status).end());
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}/`, server };
}

/** A loopback address where nothing listens (the port was just released). */
async function closedPort(): Promise<string> {
  const { url, server } = await answering(200);
  await new Promise<void>((ok) => server.close(() => ok()));
  return url;
}

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((ok) => s.close(() => ok()))));
  servers = [];
});

describe('locateElectron', () => {
  const host = { platform: 'linux' as const, arch: 'x64' };

  it('finds the binary Electron downloaded on its first run', () => {
    const dir = electronPackage(join(tmp.path, 'electron'), true);
    const found = locateElectron({ ...host, env: {}, electronPackageDir: dir });
    expect(found).toEqual({
      ok: true,
      binary: {
        path: join(dir, 'dist', 'electron'),
        source: 'node_modules/electron/dist',
        version: '45.4.1',
      },
    });
  });

  it('says what is missing when Electron was never downloaded', () => {
    const dir = electronPackage(join(tmp.path, 'electron'), false);
    const found = locateElectron({ ...host, env: {}, electronPackageDir: dir });
    expect(found.ok).toBe(false);
    if (!found.ok) expect(found.missing).toMatch(/Electron 45\.4\.1 program for linux-x64/);
  });

  it('takes the folder ELECTRON_OVERRIDE_DIST_PATH names, and names the file it lacks', () => {
    const pkg = electronPackage(join(tmp.path, 'electron'), false);
    const folder = standInElectron(join(tmp.path, 'unpacked'), 0, '45.4.1');
    expect(
      locateElectron({
        ...host,
        env: { ELECTRON_OVERRIDE_DIST_PATH: folder },
        electronPackageDir: pkg,
      }),
    ).toEqual({
      ok: true,
      binary: {
        path: join(folder, 'electron'),
        source: 'ELECTRON_OVERRIDE_DIST_PATH',
        version: '45.4.1',
      },
    });

    const empty = join(tmp.path, 'empty');
    mkdirSync(empty);
    const missing = locateElectron({
      ...host,
      platform: 'darwin',
      env: { ELECTRON_OVERRIDE_DIST_PATH: empty },
      electronPackageDir: pkg,
    });
    expect(missing).toEqual({
      ok: false,
      missing: expect.stringContaining(join(empty, 'Electron.app/Contents/MacOS/Electron')),
    });
  });

  it('warns when the folder holds another Electron version', () => {
    const pkg = electronPackage(join(tmp.path, 'electron'), false);
    const folder = standInElectron(join(tmp.path, 'unpacked'), 0, '44.0.0');
    const found = locateElectron({
      ...host,
      env: { ELECTRON_OVERRIDE_DIST_PATH: folder },
      electronPackageDir: pkg,
    });
    expect(found).toMatchObject({ ok: true, warning: expect.stringContaining('44.0.0') });
  });
});

describe('npm start (scripts/start.ts)', () => {
  it('stops before building, with the ways to provide Electron, when the named folder has none', async () => {
    const empty = join(tmp.path, 'empty');
    mkdirSync(empty);
    const ran = await runScript('start.ts', { ELECTRON_OVERRIDE_DIST_PATH: empty });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('npm start cannot run Screenpop: Electron is missing.');
    expect(ran.stderr).toContain(
      `there is no electron in it (expected ${join(empty, 'electron')})`,
    );
    expect(ran.stderr).toContain(`electron-v${version}-${process.platform}-${process.arch}.zip`);
    expect(ran.stderr).toContain('ELECTRON_MIRROR');
    // What works without Electron, for a newcomer who only wants to see a ring.
    expect(ran.stderr).toContain('Meanwhile, without Electron: npm run -s headless -- --demo');
    expect(ran.stdout).not.toContain('vite');
  });

  it.runIf(
    !locateElectron({
      env: {},
      platform: process.platform,
      arch: process.arch,
      electronPackageDir: electronPackageDir(),
    }).ok,
  )(
    'tries Electron’s first-run download once, then explains in words instead of its error and stack trace',
    async () => {
      const ran = await runScript('start.ts', {
        ELECTRON_MIRROR: await closedPort(),
        electron_config_cache: join(tmp.path, 'cache'),
      });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain('fetching it now (first run)');
      // One line in words, not the downloader's bare "TypeError: fetch failed" and its stack.
      expect(ran.stderr).toContain(
        'The download did not work: the download server could not be reached',
      );
      expect(ran.stderr).not.toContain('TypeError');
      expect(ran.stderr).not.toMatch(/^\s+at /m);
      expect(ran.stderr).toContain('is not on this computer yet');
      expect(ran.stderr).toContain('ELECTRON_OVERRIDE_DIST_PATH=/path/to/that/folder');
      expect(ran.stderr).not.toContain('npx install-electron');
    },
  );

  it('builds, then runs Electron on the project folder with the extra arguments and its exit code', async () => {
    const folder = standInElectron(join(tmp.path, 'unpacked'), 7);
    // "Built now" is judged on the file system's clock, which stamps the build's output too (the
    // process clock may differ from it, e.g. under libfaketime in CI's run at a future date).
    const marker = join(tmp.path, 'before-build');
    writeFileSync(marker, '');
    const ran = await withBuildLock(() =>
      runScript('start.ts', { ELECTRON_OVERRIDE_DIST_PATH: folder }, ['--trace-warnings']),
    );
    expect(ran.code, ran.stderr).toBe(7);
    const [cwd, ...args] = readFileSync(join(folder, 'ran.txt'), 'utf8').trim().split('\n');
    expect(cwd).toBe(root.replace(/\/$/, ''));
    expect(args).toEqual(['.', '--trace-warnings']);
    const main = join(root, 'dist', 'main', 'main.cjs');
    expect(existsSync(main)).toBe(true);
    expect(statSync(main).mtimeMs).toBeGreaterThanOrEqual(statSync(marker).mtimeMs);
    expect(existsSync(join(root, 'dist', 'renderer', 'popup.html'))).toBe(true);
  });
});

describe('npm run dist (scripts/dist.ts)', () => {
  const input = (env: Record<string, string>) => ({
    env,
    platform: 'linux' as const,
    arch: 'x64',
    electronPackageDir: electronPackageDir(),
  });
  const zip = `electron-v${version}-linux-x64.zip`;

  it('fails at once, naming the file, the host and the remedies, when the download cannot work', async () => {
    const mirror = await closedPort();
    const ran = await runScript('dist.ts', {
      ELECTRON_MIRROR: mirror,
      electron_config_cache: join(tmp.path, 'cache'),
      XDG_CACHE_HOME: join(tmp.path, 'xdg'),
    });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('npm run dist cannot package: Electron is missing.');
    expect(ran.stderr).toContain(`${new URL(mirror).host} could not be reached (ECONNREFUSED)`);
    expect(ran.stderr).toContain('ELECTRON_BUILDER_BINARIES_MIRROR');
    expect(ran.stderr).toContain('ELECTRON_OVERRIDE_DIST_PATH');
    expect(ran.stdout).not.toContain('vite');
  });

  it('goes ahead when the zip is cached, the mirror has it, or a local folder is named', async () => {
    const cache = join(tmp.path, 'cache');
    mkdirSync(join(cache, 'abc123'), { recursive: true });
    writeFileSync(join(cache, 'abc123', zip), '');
    expect(findCachedZip([cache], zip)).toBe(join(cache, 'abc123', zip));
    const unreachable = await closedPort();
    await expect(
      preflight(input({ electron_config_cache: cache, ELECTRON_MIRROR: unreachable })),
    ).resolves.toMatchObject({ ok: true, builderArgs: [] });

    const ok = await answering(302);
    servers.push(ok.server);
    const empty = join(tmp.path, 'empty-cache');
    await expect(
      preflight(
        input({ electron_config_cache: empty, XDG_CACHE_HOME: empty, ELECTRON_MIRROR: ok.url }),
      ),
    ).resolves.toMatchObject({
      ok: true,
      note: expect.stringContaining(`${ok.url}v${version}/${zip}`),
    });

    const folder = standInElectron(join(tmp.path, 'unpacked'));
    await expect(
      preflight(input({ ELECTRON_OVERRIDE_DIST_PATH: folder, ELECTRON_MIRROR: unreachable })),
    ).resolves.toMatchObject({ ok: true, builderArgs: [`-c.electronDist=${folder}`] });
  });

  it('for macOS wants both Electron builds (the app is universal): one cached is not enough', async () => {
    const cache = join(tmp.path, 'mac-cache');
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, `electron-v${version}-darwin-x64.zip`), '');
    const mac = {
      ...input({ electron_config_cache: cache, ELECTRON_MIRROR: await closedPort() }),
      platform: 'darwin' as const,
    };
    const missing = await preflight(mac);
    expect(missing).toMatchObject({
      ok: false,
      message: expect.stringContaining(`electron-v${version}-darwin-arm64.zip`),
    });
    writeFileSync(join(cache, `electron-v${version}-darwin-arm64.zip`), '');
    await expect(preflight(mac)).resolves.toMatchObject({ ok: true, builderArgs: [] });
  });

  it('for macOS takes from ELECTRON_OVERRIDE_DIST_PATH a folder with both Electron zips, not one unpacked Electron', async () => {
    const unreachable = await closedPort();
    const mac = (folder: string) => ({
      ...input({ ELECTRON_OVERRIDE_DIST_PATH: folder, ELECTRON_MIRROR: unreachable }),
      platform: 'darwin' as const,
    });
    // One unpacked Electron.app: one architecture, which electron-builder would copy twice.
    const unpacked = join(tmp.path, 'mac-unpacked');
    mkdirSync(join(unpacked, 'Electron.app', 'Contents', 'MacOS'), { recursive: true });
    writeFileSync(join(unpacked, 'Electron.app', 'Contents', 'MacOS', 'Electron'), '');
    writeFileSync(join(unpacked, 'version'), version);
    const refused = await preflight(mac(unpacked));
    expect(refused).toMatchObject({ ok: false });
    const message = refused.ok ? '' : refused.message;
    expect(message).toContain('universal');
    expect(message).toContain(`electron-v${version}-darwin-x64.zip`);
    expect(message).toContain(`electron-v${version}-darwin-arm64.zip`);

    const zips = join(tmp.path, 'mac-zips');
    mkdirSync(zips, { recursive: true });
    writeFileSync(join(zips, `electron-v${version}-darwin-arm64.zip`), '');
    const half = await preflight(mac(zips));
    expect(half).toMatchObject({ ok: false });
    expect(half.ok ? '' : half.message).toContain(`not hold electron-v${version}-darwin-x64.zip`);
    writeFileSync(join(zips, `electron-v${version}-darwin-x64.zip`), '');
    await expect(preflight(mac(zips))).resolves.toMatchObject({
      ok: true,
      builderArgs: [`-c.electronDist=${zips}`],
    });
  });

  it('refuses a mirror that does not have this Electron', async () => {
    const missing = await answering(404);
    servers.push(missing.server);
    const empty = join(tmp.path, 'empty-cache');
    const result = await preflight(
      input({ electron_config_cache: empty, XDG_CACHE_HOME: empty, ELECTRON_MIRROR: missing.url }),
    );
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringContaining('answered HTTP 404'),
    });
  });
});
