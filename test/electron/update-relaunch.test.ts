/**
 * The composition root on the electron mock, packaged and run from an AppImage: after an update
 * the new version comes up (it finds the single-instance lock free: electron-updater starts it
 * before the old app quits), the autostart entry names the new file, and the history the new
 * process reads was written first. And a launch Chromium made a native Wayland window starts
 * itself again under XWayland from the AppImage file, before taking the lock. Each case imports
 * main.ts afresh.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));
vi.mock('electron-updater', async () => {
  const { FakeAppImageUpdater } = await import('../support/electron-mock.ts');
  return { default: { autoUpdater: new FakeAppImageUpdater() } };
});
vi.mock('keytar', () => import('../support/keytar-mock.ts'));

import electronUpdater from 'electron-updater';
import {
  app,
  powerMonitor,
  resetElectronMock,
  singleInstanceLock,
  Tray,
  type FakeAppImageUpdater,
} from '../support/electron-mock.ts';

const updater = electronUpdater.autoUpdater as unknown as FakeAppImageUpdater;
const WAIT = { timeout: 20_000 };
const ENV_KEYS = [
  'APPIMAGE',
  'XDG_CONFIG_HOME',
  'XDG_SESSION_TYPE',
  'WAYLAND_DISPLAY',
  'DISPLAY',
] as const;

let dir: string;
let savedEnv: Record<string, string | undefined>;
let processListeners: {
  exception: NodeJS.UncaughtExceptionListener[];
  rejection: NodeJS.UnhandledRejectionListener[];
};

beforeEach(async () => {
  resetElectronMock();
  app.removeAllListeners();
  app.exitCode = null;
  app.isPackaged = true;
  dir = await mkdtemp(join(tmpdir(), 'sp-update-'));
  app.paths = { ...app.paths, userData: join(dir, 'data'), home: join(dir, 'home') };
  savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  process.env.XDG_CONFIG_HOME = join(dir, 'config');
  process.env.APPIMAGE = join(dir, 'Apps', 'Screenpop-1.0.0.AppImage');
  updater.removeAllListeners();
  updater.installs = [];
  processListeners = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
});

afterEach(async () => {
  app.isPackaged = false;
  app.commandLine.switches.clear();
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
  for (const l of process.listeners('uncaughtException'))
    if (!processListeners.exception.includes(l)) process.off('uncaughtException', l);
  for (const l of process.listeners('unhandledRejection'))
    if (!processListeners.rejection.includes(l)) process.off('unhandledRejection', l);
  await rm(dir, { recursive: true, force: true });
});

let imports = 0;
async function startMain(): Promise<void> {
  const main = new URL(`../../src-main/electron/main.ts?update=${++imports}`, import.meta.url);
  await import(/* @vite-ignore */ main.pathname + main.search);
  app.ready();
}

describe('an AppImage updating itself (main.ts on the electron mock)', () => {
  it('the new version finds the lock free, the autostart entry names its file, the clean part ran first', async () => {
    // Start at login on: the autostart entry names the running AppImage.
    await mkdir(join(dir, 'data'), { recursive: true });
    await writeFile(join(dir, 'data', 'settings.json'), JSON.stringify({ startAtLogin: true }));
    const autostart = join(dir, 'config', 'autostart', 'screenpop.desktop');
    await startMain();
    await vi.waitFor(() => expect(Tray.instances).toHaveLength(1), WAIT);
    expect(singleInstanceLock.holder).toBe('this');
    await vi.waitFor(
      async () => expect(await readFile(autostart, 'utf8')).toContain('Screenpop-1.0.0.AppImage'),
      WAIT,
    );

    // What this app had done when the new one started: its power watch is the clean part's first
    // step to undo, and the history is written in the same part.
    singleInstanceLock.observe = () => ({ powerWatch: powerMonitor.listenerCount('resume') });
    updater.download('1.1.0', join(dir, 'cache', 'pending', 'Screenpop-1.1.0.AppImage'));
    await vi.waitFor(() => expect(app.exitCode).toBe(0), WAIT);

    expect(updater.installs).toEqual([
      { from: process.env.APPIMAGE, to: join(dir, 'Apps', 'Screenpop-1.1.0.AppImage') },
    ]);
    // electron-updater starts the new file before it quits this app: the lock must be free then.
    expect(singleInstanceLock.others).toEqual([
      {
        command: join(dir, 'Apps', 'Screenpop-1.1.0.AppImage'),
        args: [],
        gotLock: true,
        seen: { powerWatch: 0 },
      },
    ]);
    // The quit electron-updater asks for afterwards is the one quit, its clean part already done.
    const log = await readFile(join(dir, 'data', 'logs', 'screenpop.log'), 'utf8');
    expect(log.match(/"msg":"quitting"/g) ?? []).toHaveLength(1);
    expect(await readFile(autostart, 'utf8')).toContain(
      `Exec="${join(dir, 'Apps', 'Screenpop-1.1.0.AppImage')}" --ozone-platform=x11`,
    );
  });

  it('an installer that cannot start, after the clean part: this version starts again from its AppImage file', async () => {
    const started = await standInAppImage();
    await startMain();
    await vi.waitFor(() => expect(Tray.instances).toHaveLength(1), WAIT);
    updater.failInstall = new Error('EACCES: permission denied, unlink');
    try {
      updater.download('1.1.0', join(dir, 'cache', 'pending', 'Screenpop-1.1.0.AppImage'));
      await vi.waitFor(() => expect(app.exitCode).toBe(0), WAIT);
    } finally {
      updater.failInstall = null;
    }
    expect(updater.installs).toEqual([]);
    await vi.waitFor(async () => expect(await started()).toContain('started'), WAIT);
  });
});

/** A stand-in AppImage file at $APPIMAGE: a script that notes its arguments and one variable. */
async function standInAppImage(): Promise<() => Promise<string>> {
  const file = process.env.APPIMAGE!;
  const out = join(dir, 'started.txt');
  await mkdir(join(dir, 'Apps'), { recursive: true });
  await writeFile(
    file,
    `#!/bin/sh\nprintf 'started %s relaunched=%s\\n' "$*" "$SCREENPOP_XWAYLAND_RELAUNCHED" >> '${out}'\n`,
  );
  await chmod(file, 0o755);
  return () => readFile(out, 'utf8').catch(() => '');
}

describe('a launch Chromium made a native Wayland window (main.ts on the electron mock)', () => {
  it('starts again from the AppImage file with --ozone-platform=x11, before taking the lock, and ends', async () => {
    // A double-click on the file or electron-updater's start of it: AppRun passes no switch, and
    // Electron has written its choice, Wayland, onto the command line before main.ts runs.
    Object.assign(process.env, {
      XDG_SESSION_TYPE: 'wayland',
      WAYLAND_DISPLAY: 'wayland-0',
      DISPLAY: ':0',
    });
    app.commandLine.appendSwitch('ozone-platform', 'wayland');
    const started = await standInAppImage();
    await startMain();
    await vi.waitFor(
      async () => expect(await started()).toMatch(/^started .*--ozone-platform=x11 relaunched=1$/m),
      WAIT,
    );
    expect(app.exitCode).toBe(0);
    expect(singleInstanceLock.requests).toBe(0);
    expect(Tray.instances).toEqual([]);
  });
});
