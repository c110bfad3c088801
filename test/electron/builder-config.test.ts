/** electron-builder.yml: the fuses, the app id the main process uses, and the builder's own schema check. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { APP_ID } from '../../src-main/electron/app-id.ts';
import { LINUX_LAUNCH_ARGS } from '../../src-main/electron/chromium-switches.ts';
import { DIAL_LINK_SCHEMES } from '../../src-main/core/links/dial-link.ts';

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
      resetAdHocDarwinSignature: true,
    });
  });

  it('uses the app id the main process registers, asar, and our files only', () => {
    expect(config.appId).toBe(APP_ID);
    expect(config.productName).toBe('Screenpop');
    // An archive (an object of AsarOptions is asar on), with only the .node files outside it.
    expect(config.asar).toEqual({ smartUnpack: false });
    expect(config.asarUnpack).toEqual(['**/node_modules/**/*.node']);
    expect(config.files).toEqual(expect.arrayContaining(['dist/**', 'assets/**', 'package.json']));
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { main: string };
    expect(pkg.main).toBe('dist/main/main.cjs');
  });

  it('builds for each OS with icons that exist and are large enough', () => {
    expect((config.win as { target: string[] }).target).toEqual(['nsis', 'msi']);
    expect((config.linux as { target: string[] }).target).toEqual(['AppImage', 'deb', 'rpm']);
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

  it('builds one universal macOS app (Intel and Apple Silicon), whatever Mac builds it', () => {
    // electron-builder's own reading of the targets: architecture -> target names. Without an
    // `arch` it is the building machine's only (an Apple Silicon build would not open on Intel).
    const { computeArchToTargetNamesMap } =
      require('app-builder-lib/out/targets/targetFactory') as {
        computeArchToTargetNamesMap(
          raw: Map<number, string[]>,
          packager: { platformSpecificBuildOptions: unknown },
          platform: unknown,
        ): Map<number, string[]>;
      };
    const { Arch } = require('builder-util') as { Arch: Record<number, string> };
    const { Platform } = require('app-builder-lib') as { Platform: { MAC: unknown } };
    const archs = computeArchToTargetNamesMap(
      new Map(),
      { platformSpecificBuildOptions: config.mac },
      Platform.MAC,
    );
    expect(Object.fromEntries([...archs].map(([arch, names]) => [Arch[arch], names]))).toEqual({
      universal: ['dmg', 'zip'],
    });
  });

  it('builds the AppImage with the static runtime, which needs no libfuse.so.2', () => {
    // 0.0.0 (the default) is the FUSE 2 runtime; the later toolsets carry the static one.
    const appimage = (config.toolsets as { appimage?: string } | undefined)?.appimage;
    expect(appimage).toBe('1.0.3');
    const { appimageChecksums } = require('app-builder-lib/out/toolsets/linux') as {
      appimageChecksums: Record<string, Record<string, string>>;
    };
    expect(Object.keys(appimageChecksums[appimage!] ?? {})).toEqual([
      'appimage-tools-runtime-20251108.tar.gz',
    ]);
  });

  it('on Windows: NSIS per user (it updates itself without a UAC prompt), all users on request, and a per-machine MSI that upgrades in place', () => {
    const nsis = config.nsis as Record<string, unknown>;
    expect(nsis).toMatchObject({ oneClick: false, perMachine: false, allowElevation: true });
    expect(nsis.deleteAppDataOnUninstall).toBe(false);
    const msi = config.msi as Record<string, unknown>;
    expect(msi).toMatchObject({ perMachine: true, runAfterFinish: false });
    // The value electron-builder derives from the appId, written down so that it cannot drift.
    const { UUID } = require('builder-util-runtime') as {
      UUID: { v5(name: string, ns: unknown): string; parse(text: string): unknown };
    };
    const derived = UUID.v5(APP_ID, UUID.parse('d752fe43-5d44-44d5-9fc9-6dd1bf19d5cc'));
    expect(msi.upgradeCode).toBe(derived.toUpperCase());
  });

  it('registers the call-link schemes the core reads (macOS CFBundleURLTypes, Linux x-scheme-handler)', () => {
    const protocols = config.protocols as { name: string; schemes: string[] }[];
    expect(protocols.flatMap((p) => p.schemes).sort()).toEqual([...DIAL_LINK_SCHEMES].sort());
    // Never the app's own scheme or a web scheme: only links that name a number.
    for (const p of protocols) expect(p.schemes).not.toContain('app');
  });

  it('starts the Linux packages as the autostart entry does: under XWayland, never --no-sandbox', () => {
    const linux = config.linux as { executableArgs: string[] };
    expect(linux.executableArgs).toEqual([...LINUX_LAUNCH_ARGS]);
    expect(JSON.stringify(config)).not.toContain('no-sandbox');
  });

  it('declares the runtime libraries of the Linux packages (keychain, notifications, Electron)', () => {
    const deb = (config.deb as { depends: string[]; recommends: string[] }).depends;
    const rpm = (config.rpm as { depends: string[] }).depends;
    for (const lib of ['libsecret-1-0', 'libnotify4', 'libgtk-3-0', 'libnss3', 'libgbm1'])
      expect(deb).toContain(lib);
    for (const lib of ['libsecret', 'libnotify', 'gtk3', 'nss', 'mesa-libgbm'])
      expect(rpm).toContain(lib);
    expect((config.deb as { recommends: string[] }).recommends).toContain(
      'gnome-shell-extension-appindicator',
    );
  });

  it('signs and notarizes only from the environment: no credential in the file', () => {
    const keys: string[] = [];
    const walk = (value: unknown, path: string) => {
      if (!value || typeof value !== 'object') return;
      for (const [k, v] of Object.entries(value)) {
        keys.push(`${path}${k}`);
        walk(v, `${path}${k}.`);
      }
    };
    walk(config, '');
    expect(keys.filter((k) => /csc|password|apple|identity|notarize|certificate/i.test(k))).toEqual(
      [],
    );
    expect((config.mac as { hardenedRuntime: boolean }).hardenedRuntime).toBe(true);
  });

  it('names the author, homepage and license, and publishes a generic HTTPS update feed', () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as Record<string, unknown>;
    expect(pkg.author).toMatchObject({ name: 'Screenpop', email: expect.stringContaining('@') });
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.license).toBe('UNLICENSED');
    const [feed] = config.publish as Array<{ provider: string; url: string }>;
    expect(feed?.provider).toBe('generic');
    expect(feed?.url).toMatch(/^https:\/\//);
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
