/**
 * The electron-updater adapter, with a stand-in for electron-updater's AppUpdater (the far side):
 * how it is set up, where the feed goes, and that a development run never quits to install.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppUpdater } from 'electron-updater';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { electronUpdaterPort } from '../../src-main/electron/updater.ts';

class FakeAppUpdater extends EventEmitter {
  logger: unknown = null;
  autoDownload = false;
  autoInstallOnAppQuit = true;
  forceDevUpdateConfig = false;
  updateConfigPath: string | null = null;
  allowDowngrade = false;
  private _channel: string | null = null;
  feeds: unknown[] = [];
  checks = 0;
  quits: Array<[boolean, boolean]> = [];
  get channel(): string | null {
    return this._channel;
  }
  set channel(value: string | null) {
    this._channel = value;
    this.allowDowngrade = true; // what electron-updater does
  }
  setFeedURL(options: unknown): void {
    this.feeds.push(options);
  }
  async checkForUpdates(): Promise<null> {
    this.checks++;
    return null;
  }
  /** Set it to refuse as electron-updater does: an 'error' event, no quit. */
  refuse: Error | null = null;
  quitAndInstall(isSilent: boolean, isForceRunAfter: boolean): void {
    this.quits.push([isSilent, isForceRunAfter]);
    if (this.refuse) this.emit('error', this.refuse);
  }
}

function setup(devRun = false, devConfigFile?: string) {
  let loads = 0;
  const fake = new FakeAppUpdater();
  const logger = memoryLogger();
  const released: number[] = [];
  const port = electronUpdaterPort({
    load: () => {
      loads++;
      return fake as unknown as AppUpdater;
    },
    logger,
    devRun,
    ...(devConfigFile ? { devConfigFile } : {}),
    beforeInstall: () => released.push(fake.quits.length),
  });
  return { fake, port, logger, loads: () => loads, released };
}

describe('electronUpdaterPort', () => {
  it('loads electron-updater only when first used', () => {
    const { loads, port } = setup();
    port.onDownloaded(() => {});
    expect(loads()).toBe(0);
    port.configure({ url: null, channel: 'latest' });
    port.configure({ url: null, channel: 'beta' });
    expect(loads()).toBe(1);
  });

  it('downloads by itself, installs only when told, never downgrades, and reads the given feed', async () => {
    const { fake, port } = setup();
    port.configure({ url: 'https://updates.acme.example/screenpop', channel: 'beta' });
    expect(fake).toMatchObject({
      autoDownload: true,
      autoInstallOnAppQuit: false,
      forceDevUpdateConfig: false,
      allowDowngrade: false,
      channel: 'beta',
    });
    expect(fake.feeds).toEqual([
      { provider: 'generic', url: 'https://updates.acme.example/screenpop', channel: 'beta' },
    ]);
    await port.check();
    expect(fake.checks).toBe(1);
  });

  it('keeps the build’s feed when no address is given', () => {
    const { fake, port } = setup();
    port.configure({ url: null, channel: 'latest' });
    expect(fake.feeds).toEqual([]);
  });

  it('reports a downloaded version, logs updater errors, and installs silently then restarts', () => {
    const { fake, port, logger, released } = setup();
    const versions: string[] = [];
    port.onDownloaded((v) => versions.push(v));
    port.configure({ url: null, channel: 'latest' });
    fake.emit('update-downloaded', { version: '1.2.0' });
    expect(versions).toEqual(['1.2.0']);
    expect(() => fake.emit('error', new Error('sha512 checksum mismatch'))).not.toThrow();
    expect(logger.records.map((r) => r.msg)).toContain('updater error');
    port.install();
    expect(fake.quits).toEqual([[true, true]]);
    // The popup was let go before quitAndInstall closed the windows.
    expect(released).toEqual([0]);
  });

  it('in a development run checks for real but only logs where it would restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-updater-'));
    const devConfigFile = join(dir, 'dev-app-update.yml');
    const { fake, port, logger } = setup(true, devConfigFile);
    port.configure({ url: 'https://127.0.0.1:8443/feed', channel: 'latest' });
    expect(fake.forceDevUpdateConfig).toBe(true);
    // What a packaged app has in resources/app-update.yml, for electron-updater's download cache.
    expect(fake.updateConfigPath).toBe(devConfigFile);
    expect(readFileSync(devConfigFile, 'utf8')).toBe(
      'provider: generic\nurl: "https://127.0.0.1:8443/feed"\nchannel: "latest"\nupdaterCacheDirName: screenpop-updater-dev\n',
    );
    rmSync(dir, { recursive: true, force: true });
    port.install();
    expect(fake.quits).toEqual([]);
    expect(logger.records.map((r) => r.msg)).toContain(
      'development run: a packaged app would restart now to install the update',
    );
  });

  it('hands the install to installInOrder with the downloaded file; a refused install throws there', async () => {
    const fake = new FakeAppUpdater();
    const seen: Array<{ file: string | null; error: unknown }> = [];
    const port = electronUpdaterPort({
      load: () => fake as unknown as AppUpdater,
      logger: memoryLogger(),
      devRun: false,
      installInOrder: async (quitAndInstall, file) => {
        let error: unknown = null;
        try {
          quitAndInstall();
        } catch (err) {
          error = err;
        }
        seen.push({ file, error });
      },
    });
    port.configure({ url: null, channel: 'latest' });
    fake.emit('update-downloaded', {
      version: '1.2.0',
      downloadedFile: '/c/Screenpop-1.2.0.AppImage',
    });
    port.install();
    fake.refuse = new Error('APPIMAGE env is not defined');
    port.install();
    await Promise.resolve();
    expect(seen).toEqual([
      { file: '/c/Screenpop-1.2.0.AppImage', error: null },
      { file: '/c/Screenpop-1.2.0.AppImage', error: fake.refuse },
    ]);
  });
});
