import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { WebContents } from 'electron';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { secureWebPreferences } from '../../src-main/electron/security.ts';
import { AppWindows } from '../../src-main/electron/windows.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { BrowserWindow, resetElectronMock } from '../support/electron-mock.ts';
import { fakeWindowFactory } from './support.ts';

beforeEach(() => resetElectronMock());

describe('AppWindows', () => {
  it('keeps one window per page, shows it when ready, focuses it when asked again', async () => {
    const f = fakeWindowFactory();
    const w = new AppWindows({
      createWindow: f.create,
      origin: new AppOrigin(null),
      webPreferences: secureWebPreferences('/p.cjs', false),
      logger: silentLogger,
    });
    w.show('settings');
    const win = f.last();
    expect(win.loadedUrl).toBe('app://screenpop/settings.html');
    expect(win.visible).toBe(false);
    // Electron's 'ready-to-show' comes after the page has loaded and painted: shown then, focused.
    await vi.waitFor(() => expect(win.visible).toBe(true));
    expect(win.focused).toBe(true);
    w.show('settings');
    expect(BrowserWindow.instances).toHaveLength(1);
    expect(w.owns(win.webContents as unknown as WebContents)).toBe(true);

    w.broadcast('status:changed', {
      state: 'offline',
      paused: false,
      doNotDisturb: false,
      missedCount: 0,
      demo: false,
    });
    expect(win.webContents.lastSent('status:changed')).toBeDefined();

    const contents = win.webContents as unknown as WebContents;
    w.closeFor(contents);
    expect(win.destroyed).toBe(true);
    expect(w.get('settings')).toBeUndefined();
    expect(w.owns(contents)).toBe(false);
    w.show('settings');
    expect(BrowserWindow.instances).toHaveLength(2);
  });
  it('a notification click opens History with its item selected: kept for a page still loading, pushed to an open one', async () => {
    const f = fakeWindowFactory();
    const w = new AppWindows({
      createWindow: f.create,
      origin: new AppOrigin(null),
      webPreferences: secureWebPreferences('/p.cjs', false),
      logger: silentLogger,
    });
    // History is not open: it opens, and its page, still loading, misses the push (as in Electron).
    w.showHistoryAt('c1');
    const win = f.last();
    expect(win.loadedUrl).toBe('app://screenpop/history.html');
    expect(win.contents.dropped).toEqual([{ channel: 'history:select', args: ['c1'] }]);
    await vi.waitFor(() => expect(win.visible).toBe(true));
    // Loaded, it asks once (history:selection): the id is its own window's, and only once.
    const contents = win.webContents as unknown as WebContents;
    const settings = (w.show('settings'), f.last());
    expect(w.takeSelection(settings.webContents as unknown as WebContents)).toBeNull();
    expect(w.takeSelection(contents)).toBe('c1');
    expect(w.takeSelection(contents)).toBeNull();
    // History is open: the push reaches its page, and the window comes to the front.
    win.focused = false;
    win.minimized = true;
    w.showHistoryAt('voicemail:v1');
    expect(win.contents.lastSent('history:select')).toEqual(['voicemail:v1']);
    expect(win.minimized).toBe(false);
    expect(win.focused).toBe(true);
    expect(
      BrowserWindow.instances.filter((b) => b.loadedUrl?.endsWith('history.html')),
    ).toHaveLength(1);
    // Closed, then opened from the tray: the selection died with its window.
    w.closeFor(contents);
    w.show('history');
    const again = f.last();
    expect(again).not.toBe(win);
    expect(w.takeSelection(again.webContents as unknown as WebContents)).toBeNull();
  });
});
