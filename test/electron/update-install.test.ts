/**
 * Where the new AppImage lands, checked against electron-updater's own AppImageUpdater.doInstall
 * (the real one from node_modules, on temporary files: the running "AppImage" and the download
 * are small scripts), so that the autostart entry, written before the install, names the file the
 * install makes. And the order of the install steps.
 */
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appImageDestination, installInOrder } from '../../src-main/electron/update-install.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const require = createRequire(import.meta.url);
const { AppImageUpdater } = require('electron-updater') as {
  AppImageUpdater: new (
    options: unknown,
    app: unknown,
  ) => {
    downloadedUpdateHelper: unknown;
    logger: unknown;
    on(event: string, listener: (...args: unknown[]) => void): void;
    doInstall(options: { isSilent: boolean; isForceRunAfter: boolean }): boolean;
  };
};

let dir: string;
let savedAppImage: string | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sp-appimage-install-'));
  savedAppImage = process.env.APPIMAGE;
});
afterEach(async () => {
  if (savedAppImage === undefined) delete process.env.APPIMAGE;
  else process.env.APPIMAGE = savedAppImage;
  await rm(dir, { recursive: true, force: true });
});

/** electron-updater's AppImage install of `downloaded` over the running `current`; where it went. */
async function realInstall(currentName: string, downloadedName: string): Promise<string> {
  const script = '#!/bin/sh\nexit 0\n';
  await mkdir(join(dir, 'Apps'), { recursive: true });
  await mkdir(join(dir, 'cache'), { recursive: true });
  const current = join(dir, 'Apps', currentName);
  const downloaded = join(dir, 'cache', downloadedName);
  await writeFile(current, script);
  await writeFile(downloaded, script);
  await chmod(downloaded, 0o755);
  process.env.APPIMAGE = current;
  const app = {
    version: '1.0.0',
    name: 'Screenpop',
    isPackaged: true,
    appUpdateConfigPath: join(dir, 'app-update.yml'),
    userDataPath: dir,
    baseCachePath: dir,
    whenReady: () => Promise.resolve(),
    quit: () => {},
    relaunch: () => {},
    onQuit: () => {},
  };
  const updater = new AppImageUpdater(null, app);
  updater.logger = null;
  updater.downloadedUpdateHelper = {
    file: downloaded,
    downloadedFileInfo: { isAdminRightsRequired: false },
  };
  // Not forced to run after: it runs the new file once, synchronously (the script exits at once).
  expect(updater.doInstall({ isSilent: true, isForceRunAfter: false })).toBe(true);
  const files = await readdir(join(dir, 'Apps'));
  expect(files).toHaveLength(1);
  return join(dir, 'Apps', files[0]!);
}

describe('appImageDestination', () => {
  it('is where electron-updater 6.8 puts the new AppImage: renamed after the download when the old name has a version', async () => {
    const landed = await realInstall('Screenpop-1.0.0.AppImage', 'Screenpop-1.1.0.AppImage');
    expect(landed).toBe(join(dir, 'Apps', 'Screenpop-1.1.0.AppImage'));
    expect(
      appImageDestination(
        join(dir, 'Apps', 'Screenpop-1.0.0.AppImage'),
        join(dir, 'cache', 'Screenpop-1.1.0.AppImage'),
      ),
    ).toBe(landed);
  });

  it('keeps a name without a version: a stable path for good', async () => {
    const landed = await realInstall('Screenpop.AppImage', 'Screenpop-1.1.0.AppImage');
    expect(landed).toBe(join(dir, 'Apps', 'Screenpop.AppImage'));
    expect(
      appImageDestination(
        join(dir, 'Apps', 'Screenpop.AppImage'),
        join(dir, 'cache', 'Screenpop-1.1.0.AppImage'),
      ),
    ).toBe(landed);
  });
});

describe('installInOrder', () => {
  it('cleans up, points the autostart entry at the new file, lets the lock go, then installs', async () => {
    const steps: string[] = [];
    await installInOrder(
      {
        clock: new FakeClock(),
        logger: memoryLogger(),
        cleanUp: async () => void steps.push('clean up'),
        appImage: '/home/ada/Apps/Screenpop-1.0.0.AppImage',
        pointAutostartAt: async (file) => void steps.push(`autostart ${file}`),
        releaseLock: () => steps.push('release lock'),
        quitAndInstall: () => steps.push('quitAndInstall'),
        restart: () => steps.push('restart'),
      },
      '/home/ada/.cache/screenpop-updater/pending/Screenpop-1.1.0.AppImage',
    );
    expect(steps).toEqual([
      'clean up',
      'autostart /home/ada/Apps/Screenpop-1.1.0.AppImage',
      'release lock',
      'quitAndInstall',
    ]);
  });

  it('a clean part that hangs holds the install back only for the update’s quit limit; a refused install starts this version again', async () => {
    const clock = new FakeClock();
    const steps: string[] = [];
    const done = installInOrder(
      {
        clock,
        logger: memoryLogger(),
        cleanUp: () => new Promise<void>(() => {}),
        appImage: undefined,
        pointAutostartAt: async () => void steps.push('autostart'),
        releaseLock: () => steps.push('release lock'),
        quitAndInstall: () => {
          throw new Error('No update filepath provided');
        },
        restart: () => steps.push('restart'),
      },
      null,
    );
    await clock.advance(5_000);
    await done;
    expect(steps).toEqual(['release lock', 'restart']);
  });
});
