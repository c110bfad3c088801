/**
 * The composition root's start-up per OS on the electron mock (process.platform played), for what
 * only shows at start: a second launch during start-up (single-instance), the macOS notification
 * permission asked once (provisioned installs too), and Windows' toast identity (unpackaged runs
 * their own name and AppUserModelID; the Toast Activator CLSID in force before the first
 * Notification.isSupported(), which writes the Start Menu shortcut; activations handled). Each case
 * imports main.ts afresh and quits it through the tray.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));
vi.mock('keytar', () => import('../support/keytar-mock.ts'));

import {
  app,
  appPlace,
  BrowserWindow,
  Notification,
  resetElectronMock,
  toastActivation,
  Tray,
} from '../support/electron-mock.ts';
import { keychain } from '../support/keytar-mock.ts';

const WAIT = { timeout: 20_000 };
const realPlatform = process.platform;
let dir: string;
let processListeners: {
  exception: NodeJS.UncaughtExceptionListener[];
  rejection: NodeJS.UnhandledRejectionListener[];
};

function playPlatform(platform: NodeJS.Platform): void {
  Object.defineProperty(process, 'platform', { value: platform, configurable: true });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sp-platform-'));
  keychain.clear();
  processListeners = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  fresh(join(dir, 'user'));
  // No machine policy (and on a played Windows, no registry read).
  process.env.SCREENPOP_POLICY_FILE = join(dir, 'no-policy.json');
});

afterEach(async () => {
  playPlatform(realPlatform);
  delete process.env.SCREENPOP_POLICY_FILE;
  for (const l of process.listeners('uncaughtException'))
    if (!processListeners.exception.includes(l)) process.off('uncaughtException', l);
  for (const l of process.listeners('unhandledRejection'))
    if (!processListeners.rejection.includes(l)) process.off('unhandledRejection', l);
  await rm(dir, { recursive: true, force: true });
});

/** A new process: the fake reset, the given data folder. */
function fresh(userData: string): void {
  resetElectronMock();
  app.removeAllListeners();
  app.exitCode = null;
  app.paths = { ...app.paths, userData };
}

let imports = 0;
async function startMain(): Promise<void> {
  const main = new URL(`../../src-main/electron/main.ts?platform=${++imports}`, import.meta.url);
  await import(/* @vite-ignore */ main.pathname + main.search);
  app.ready();
  await vi.waitFor(() => expect(Tray.instances).toHaveLength(1), WAIT);
}

async function started(): Promise<void> {
  // 'ready' is logged at the end of start().
  await vi.waitFor(
    () =>
      expect(BrowserWindow.instances.some((w) => w.loadedUrl?.endsWith('popup.html'))).toBe(true),
    WAIT,
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
}

async function quit(): Promise<void> {
  Tray.instances[0]!.item('quit')!.click!();
  await vi.waitFor(() => expect(app.exitCode).toBe(0), WAIT);
}

/** An install the organisation provisioned: settings in the policy, the secret in the keychain. */
async function provisioned(): Promise<void> {
  const policy = join(dir, 'policy.json');
  await writeFile(
    policy,
    JSON.stringify({
      managedBy: 'Acme IT',
      settings: { baseUrl: 'http://127.0.0.1:9', apiKey: 'ak_test', extensions: ['101'] },
    }),
  );
  process.env.SCREENPOP_POLICY_FILE = policy;
  keychain.set('Screenpop/ak_test@127.0.0.1:9', 'the-secret');
}

const settingsWindow = () =>
  BrowserWindow.instances.find((w) => w.loadedUrl === 'app://screenpop/settings.html');
const welcomes = () =>
  Notification.instances.filter((n) => n.options.title === 'Screenpop is ready');

describe('a second launch', () => {
  it('during start-up (before its awaits are done) is answered with the settings window, not lost', async () => {
    await provisioned();
    // The second launch comes while start() builds its first window, before it awaits anything.
    app.once('browser-window-created', () => app.emit('second-instance'));
    await startMain();
    await started();
    expect(settingsWindow()).toBeDefined();
    await quit();
  });
});

describe('macOS: notification permission', () => {
  it('is asked (the welcome notification) at the first start only, not at every start until set up', async () => {
    playPlatform('darwin');
    await startMain();
    await started();
    await vi.waitFor(() => expect(welcomes()).toHaveLength(1), WAIT);
    await quit();
    fresh(join(dir, 'user'));
    await startMain();
    await started();
    expect(welcomes()).toHaveLength(0);
    await quit();
  });

  it('is asked on an install provisioned by policy too, which shows no onboarding', async () => {
    playPlatform('darwin');
    await provisioned();
    await startMain();
    await started();
    expect(settingsWindow()).toBeUndefined();
    await vi.waitFor(() => expect(welcomes()).toHaveLength(1), WAIT);
    await quit();
  });
});

describe('Windows: toasts', () => {
  it('an unpackaged run is its own app to Windows, with a fixed activator set before the first notification check', async () => {
    playPlatform('win32');
    await startMain();
    await started();
    expect(app.appUserModelId).toBe('com.screenpop.desktop.dev');
    expect(appPlace.name).toBe('Screenpop (development)');
    expect(app.paths.userData).toBe(join(dir, 'user'));
    // The first notification (a call, whenever it comes) checks support: Electron writes the
    // shortcut then, with what is in force.
    expect(toastActivation.shortcut).toBeNull();
    Notification.isSupported();
    expect(toastActivation.shortcut).toEqual({
      name: 'Screenpop (development)',
      appUserModelId: 'com.screenpop.desktop.dev',
      clsid: '{F9B1222A-F287-4F83-ACBF-ACDC32BEDF33}',
    });
    await quit();
  });

  it('a toast clicked in the Action Centre after its notification is gone opens the History', async () => {
    playPlatform('win32');
    await startMain();
    await started();
    expect(toastActivation.handler).not.toBeNull();
    toastActivation.activate('');
    expect(
      BrowserWindow.instances.find((w) => w.loadedUrl === 'app://screenpop/history.html'),
    ).toBeDefined();
    await quit();
  });
});
