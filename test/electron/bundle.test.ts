/**
 * The esbuild bundles, built into a temporary folder: the main bundle loads as CommonJS with the
 * fake electron and starts (so the bundling itself, not just the sources, is known to work), and
 * the preload requires nothing but electron, as a sandboxed preload must.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildMain, MAIN_EXTERNALS } from '../../scripts/build-main.ts';
import { INVOKE_CHANNELS, type StatusView } from '../../src-main/ipc/contract.ts';
import * as electronMock from '../support/electron-mock.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'sp-bundle-'));
  await buildMain({ outDir: out, quiet: true });
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

/** The non-built-in modules the main bundle requires, sorted. */
async function mainRequires(): Promise<string[]> {
  const text = await readFile(join(out, 'main', 'main.cjs'), 'utf8');
  const required = new Set([...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1] ?? ''));
  return [...required].filter((r) => !r.startsWith('node:') && !Module.isBuiltin(r)).sort();
}

describe('scripts/build-main.ts', () => {
  it('bundles a preload that requires only electron', async () => {
    const text = await readFile(join(out, 'preload', 'preload.cjs'), 'utf8');
    expect([...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1])).toEqual(['electron']);
    expect(text).toContain('exposeInMainWorld');
  });

  it('lists as production dependencies exactly what the main bundle loads from node_modules', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    // electron is the runtime itself; ws loads its optional native helpers inside try/catch.
    const provided = ['electron', 'bufferutil', 'utf-8-validate'];
    const loaded = (await mainRequires()).filter((name) => !provided.includes(name));
    // keytar is optional at install (it builds against libsecret) and required by the package
    // (scripts/dist.ts stops without it; package.test.ts finds it in app.asar). kerberos (proxy
    // sign-in by Negotiate, src-shared/net/gssapi.ts) is optional at install and at run time.
    expect(Object.keys(pkg.optionalDependencies ?? {})).toEqual(['keytar', 'kerberos']);
    expect(
      [...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})].sort(),
    ).toEqual(loaded);
  });

  it('bundles a main that loads as CommonJS and starts with only the externals left', async () => {
    const text = await readFile(join(out, 'main', 'main.cjs'), 'utf8');
    expect(await mainRequires()).toEqual([
      'bufferutil',
      'electron',
      'electron-updater',
      'kerberos',
      'keytar',
      'utf-8-validate',
    ]);
    expect(text).not.toContain('import.meta');
    await runBundle('main/main.cjs', async () => {
      await vi.waitFor(
        () => expect(electronMock.ipcMain.handlers.size).toBe(INVOKE_CHANNELS.length),
        { timeout: 10_000 },
      );
      await vi.waitFor(
        () =>
          expect(electronMock.BrowserWindow.instances.map((w) => w.loadedUrl)).toContain(
            'app://screenpop/settings.html',
          ),
        { timeout: 10_000 },
      );
    });
  });

  it('starts where keytar is not installed, and says so in the status with what to install', async () => {
    // A copy of the bundle in a folder of its own (Node caches a module, and a resolution, per
    // folder), with keytar resolving as Node does for a package that is not in node_modules.
    await mkdir(join(out, 'no-keytar'), { recursive: true });
    await copyFile(join(out, 'main', 'main.cjs'), join(out, 'no-keytar', 'main.cjs'));
    await runBundle(
      'no-keytar/main.cjs',
      async () => {
        const settings = await vi.waitFor(
          () => {
            const w = electronMock.BrowserWindow.instances.find(
              (x) => x.loadedUrl === 'app://screenpop/settings.html' && !x.destroyed,
            );
            expect(w).toBeDefined();
            return w!;
          },
          { timeout: 10_000 },
        );
        const problem = await vi.waitFor(
          async () => {
            const status = (await electronMock.ipcMain.invoke('status:get', {
              sender: settings.webContents,
            })) as StatusView;
            const found = status.desktopProblems?.find((p) => p.id === 'keychain');
            expect(found).toBeDefined();
            return found!;
          },
          { timeout: 10_000 },
        );
        expect(problem.reason).toBe(
          'The keychain module (keytar) is not installed, so the API secret cannot be stored or read.',
        );
        expect(problem.remedy).toContain(
          process.platform === 'linux' ? 'sudo apt-get install libsecret-1-dev' : 'npm ci',
        );
        expect(electronMock.Tray.instances[0]?.item('problem-keychain')?.label).toBe(
          problem.reason,
        );
        // Saving a secret says the same; nothing is kept anywhere instead.
        const saved = (await electronMock.ipcMain.invoke(
          'settings:save',
          { sender: settings.webContents },
          {
            settings: { baseUrl: 'https://acme.example.com', apiKey: 'key1', extensions: ['101'] },
            secret: 's3cret-never-on-disk',
          },
        )) as { ok: boolean; field?: string; message?: string };
        expect(saved).toMatchObject({ ok: false, field: 'secret' });
        expect(saved.message).toMatch(/^The keychain module \(keytar\) is not installed/);
      },
      { keytarMissing: true },
    );
  });
});

/**
 * Loads a copy of the main bundle with `electron` resolved to the fake (and, if asked, keytar
 * missing), lets it start, runs `body`, then quits it.
 */
async function runBundle(
  file: string,
  body: (dir: string) => Promise<void>,
  options: { keytarMissing?: boolean } = {},
): Promise<void> {
  electronMock.resetElectronMock();
  electronMock.app.removeAllListeners();
  electronMock.app.exitCode = null;
  const dir = await mkdtemp(join(tmpdir(), 'sp-bundle-data-'));
  electronMock.app.paths.userData = dir;
  const shim = join(out, 'electron-shim.cjs');
  await writeFile(shim, 'module.exports = globalThis.__screenpopElectronMock;');
  (globalThis as Record<string, unknown>).__screenpopElectronMock = electronMock;
  const M = Module as unknown as {
    _resolveFilename: (request: string, ...rest: unknown[]) => string;
  };
  const original = M._resolveFilename;
  // The bundle sits in a temporary folder: its other externals resolve from the repository's
  // node_modules, as they do from app.asar's in the package.
  M._resolveFilename = (request, ...rest) =>
    request === 'electron'
      ? shim
      : request === 'keytar' && options.keytarMissing
        ? original(request, null, false, { paths: [join(dir, 'no-node-modules')] })
        : MAIN_EXTERNALS.includes(request)
          ? original(request, null, false, { paths: [root] })
          : original(request, ...rest);
  const before = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  try {
    createRequire(import.meta.url)(join(out, file));
    electronMock.app.ready();
    await body(dir);
    electronMock.app.quit();
    await vi.waitFor(() => expect(electronMock.app.exitCode).toBe(0), { timeout: 10_000 });
  } finally {
    M._resolveFilename = original;
    for (const l of process.listeners('uncaughtException'))
      if (!before.exception.includes(l)) process.off('uncaughtException', l);
    for (const l of process.listeners('unhandledRejection'))
      if (!before.rejection.includes(l)) process.off('unhandledRejection', l);
    await rm(dir, { recursive: true, force: true });
  }
}
