/**
 * The esbuild bundles, built into a temporary folder: the main bundle loads as CommonJS with the
 * fake electron and starts (so the bundling itself, not just the sources, is known to work), and
 * the preload requires nothing but electron, as a sandboxed preload must.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildMain, MAIN_EXTERNALS } from '../../scripts/build-main.ts';
import { INVOKE_CHANNELS } from '../../src-main/ipc/contract.ts';
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
    };
    // electron is the runtime itself; ws loads its optional native helpers inside try/catch.
    const provided = ['electron', 'bufferutil', 'utf-8-validate'];
    const loaded = (await mainRequires()).filter((name) => !provided.includes(name));
    expect(Object.keys(pkg.dependencies).sort()).toEqual(loaded);
  });

  it('bundles a main that loads as CommonJS and starts with only the externals left', async () => {
    const text = await readFile(join(out, 'main', 'main.cjs'), 'utf8');
    expect(await mainRequires()).toEqual([
      'bufferutil',
      'electron',
      'electron-updater',
      'keytar',
      'utf-8-validate',
    ]);
    expect(text).not.toContain('import.meta');

    // Load it with `electron` resolved to the fake.
    electronMock.resetElectronMock();
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
        : MAIN_EXTERNALS.includes(request)
          ? original(request, null, false, { paths: [root] })
          : original(request, ...rest);
    try {
      createRequire(import.meta.url)(join(out, 'main', 'main.cjs'));
      electronMock.app.ready();
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
      electronMock.app.quit();
      await vi.waitFor(() => expect(electronMock.app.exitCode).toBe(0), { timeout: 10_000 });
    } finally {
      M._resolveFilename = original;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
