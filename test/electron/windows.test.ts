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
});
