/**
 * The preload as Electron loads it: bundled to CommonJS by esbuild (as scripts/build-main.ts
 * does), then run in a bare VM context with a stand-in `require`. A sandboxed preload may require
 * nothing but 'electron', and must expose exactly one object, of named functions, as `screenpop`.
 */
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const entry = fileURLToPath(new URL('../../src-main/electron/preload.ts', import.meta.url));

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'chrome140',
    external: ['electron'],
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

describe('preload bundle', () => {
  it('requires only electron and exposes one API object of named functions as `screenpop`', async () => {
    const code = await bundle();
    const required: string[] = [];
    const exposed: [string, unknown][] = [];
    const invoked: string[] = [];
    const electron = {
      contextBridge: {
        exposeInMainWorld: (key: string, value: unknown) => exposed.push([key, value]),
      },
      ipcRenderer: {
        invoke: (channel: string) => {
          invoked.push(channel);
          return Promise.resolve(null);
        },
        on: () => undefined,
        removeListener: () => undefined,
      },
    };
    const module = { exports: {} };
    runInNewContext(code, {
      module,
      exports: module.exports,
      require: (name: string) => {
        required.push(name);
        if (name !== 'electron') throw new Error(`a sandboxed preload cannot require ${name}`);
        return electron;
      },
    });
    expect(required).toEqual(['electron']);
    expect(exposed.map(([key]) => key)).toEqual(['screenpop']);
    const api = exposed[0]?.[1] as Record<string, (...args: unknown[]) => unknown>;
    expect(Object.values(api).every((v) => typeof v === 'function')).toBe(true);
    expect(Object.values(api)).not.toContain(electron.ipcRenderer);
    await api.openCrm?.('c1');
    await api.saveSettings?.({ settings: {} });
    expect(invoked).toEqual(['popup:open-crm', 'settings:save']);
  });
});
