/**
 * The composition root's start and end on the electron mock: a start-up that fails says so and
 * ends (never an invisible process holding the single-instance lock), and the OS ending the
 * session (Windows log-off: 'session-end'; Linux/macOS shutdown: powerMonitor 'shutdown') runs the
 * same clean quit as the tray's Quit, within its time limit. Each case imports main.ts afresh.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));
vi.mock('keytar', () => import('../support/keytar-mock.ts'));

import {
  app,
  BrowserWindow,
  dialog,
  fakeEvent,
  powerMonitor,
  resetElectronMock,
  Tray,
} from '../support/electron-mock.ts';

let dir: string;
let processListeners: {
  exception: NodeJS.UncaughtExceptionListener[];
  rejection: NodeJS.UnhandledRejectionListener[];
};

beforeEach(async () => {
  resetElectronMock();
  app.removeAllListeners();
  app.exitCode = null;
  dir = await mkdtemp(join(tmpdir(), 'sp-life-'));
  app.paths = { ...app.paths, userData: dir };
  processListeners = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
});

afterEach(async () => {
  // main.ts's last resort adds process handlers; take them off again.
  for (const l of process.listeners('uncaughtException'))
    if (!processListeners.exception.includes(l)) process.off('uncaughtException', l);
  for (const l of process.listeners('unhandledRejection'))
    if (!processListeners.rejection.includes(l)) process.off('unhandledRejection', l);
  await rm(dir, { recursive: true, force: true });
});

/** Starting the whole app can take seconds on a busy machine. */
const WAIT = { timeout: 20_000 };
let imports = 0;
/** main.ts afresh (a new module instance each time, sharing this file's electron mock). */
async function startMain(): Promise<void> {
  const main = new URL(`../../src-main/electron/main.ts?case=${++imports}`, import.meta.url);
  await import(/* @vite-ignore */ main.pathname + main.search);
  app.ready();
}

const settingsWindow = () =>
  BrowserWindow.instances.find(
    (w) => w.loadedUrl === 'app://screenpop/settings.html' && !w.destroyed,
  );

describe('main.ts start and end', () => {
  it('a start-up that fails says so in a window and ends with 1, leaving no process behind', async () => {
    // Electron throws for a path it cannot give; here the app's own data folder.
    delete (app.paths as Record<string, string>).userData;
    app.preferredLanguages = ['de-DE'];
    try {
      await startMain();
      await vi.waitFor(() => expect(app.exitCode).toBe(1), WAIT);
    } finally {
      app.preferredLanguages = ['en-US'];
    }
    expect(dialog.errorBoxes).toEqual([
      {
        title: 'Screenpop konnte nicht starten',
        content: expect.stringMatching(
          /^Beim Start von Screenpop ist ein Fehler aufgetreten: no path userData/,
        ),
      },
    ]);
    expect(Tray.instances).toEqual([]);
  });

  it('Windows log-off (session-end on a window) runs the clean quit: history written, tray gone, exit 0', async () => {
    await startMain();
    await vi.waitFor(() => expect(settingsWindow()).toBeDefined(), WAIT);
    await vi.waitFor(() => expect(Tray.instances).toHaveLength(1), WAIT);
    const popup = BrowserWindow.instances.find((w) => w.loadedUrl?.endsWith('popup.html'))!;
    popup.emit('session-end', Object.assign(fakeEvent(), { reasons: ['logoff'] }));
    await vi.waitFor(() => expect(app.exitCode).toBe(0), WAIT);
    expect(Tray.instances[0]?.destroyed).toBe(true);
    expect(BrowserWindow.getAllWindows()).toEqual([]);
    const log = await readFile(join(dir, 'logs', 'screenpop.log'), 'utf8');
    expect(log).toContain('"msg":"quitting","component":"quit","reason":"session-end"');
  });

  it('a Linux or macOS shutdown is held (preventDefault) only for the clean quit, then the app exits', async () => {
    await startMain();
    await vi.waitFor(() => expect(Tray.instances).toHaveLength(1), WAIT);
    const event = fakeEvent();
    powerMonitor.emit('shutdown', event);
    expect(event.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(app.exitCode).toBe(0), WAIT);
    // A quit from the OS meanwhile does not start a second one.
    const log = await readFile(join(dir, 'logs', 'screenpop.log'), 'utf8');
    expect(log.match(/"msg":"quitting"/g)).toHaveLength(1);
  });

  it('Quit in the tray ends the app cleanly; a quit the OS asks for meanwhile is the same one', async () => {
    await startMain();
    await vi.waitFor(() => expect(Tray.instances).toHaveLength(1), WAIT);
    Tray.instances[0]!.item('quit')!.click!();
    app.quit(); // e.g. macOS logging out at that moment: held, not a second quit
    await vi.waitFor(() => expect(app.exitCode).toBe(0), WAIT);
    const log = await readFile(join(dir, 'logs', 'screenpop.log'), 'utf8');
    expect(log).toContain('"reason":"user"');
    expect(log.match(/"msg":"quitting"/g)).toHaveLength(1);
  });
});
