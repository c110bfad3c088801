/** electron-builder.yml: the fuses, the app id the main process uses, and the builder's own schema check. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { APP_ID } from '../../src-main/electron/app-id.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const yaml = require('js-yaml') as { load(text: string): unknown };
const config = yaml.load(readFileSync(`${root}electron-builder.yml`, 'utf8')) as Record<
  string,
  unknown
>;

function pngSize(path: string): { width: number; height: number } {
  const b = readFileSync(path);
  expect(b.subarray(1, 4).toString('ascii')).toBe('PNG');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe('electron-builder.yml', () => {
  it('sets every security fuse', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('uses the app id the main process registers, asar, and our files only', () => {
    expect(config.appId).toBe(APP_ID);
    expect(config.productName).toBe('Screenpop');
    expect(config.asar).toBe(true);
    expect(config.files).toEqual(expect.arrayContaining(['dist/**', 'assets/**', 'package.json']));
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { main: string };
    expect(pkg.main).toBe('dist/main/main.cjs');
  });

  it('builds for each OS with icons that exist and are large enough', () => {
    expect((config.mac as { target: string[] }).target).toEqual(['dmg', 'zip']);
    expect((config.win as { target: string[] }).target).toEqual(['nsis']);
    expect((config.linux as { target: string[] }).target).toEqual(['AppImage', 'deb']);
    for (const [os, min] of [
      ['mac', 512],
      ['win', 256],
      ['linux', 256],
    ] as const) {
      const icon = (config[os] as { icon: string }).icon;
      const size = pngSize(`${root}${icon}`);
      expect(size.width, os).toBeGreaterThanOrEqual(min);
      expect(size.height, os).toBe(size.width);
    }
  });

  it("passes electron-builder's own configuration schema", async () => {
    const { validateConfiguration } = require('app-builder-lib/out/util/config/config') as {
      validateConfiguration(c: unknown, l: unknown): Promise<void>;
    };
    const { DebugLogger } = require('builder-util') as {
      DebugLogger: new (enabled: boolean) => unknown;
    };
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
    await expect(
      validateConfiguration(
        { ...config, electronFuses: { ...(config.electronFuses as object), runAsNodee: false } },
        new DebugLogger(false),
      ),
    ).rejects.toThrow(/Invalid configuration/);
  });
});
