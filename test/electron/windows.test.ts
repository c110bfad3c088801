import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { WebContents } from 'electron';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { secureWebPreferences } from '../../src-main/electron/security.ts';
import { AppWindows } from '../../src-main/electron/windows.ts';
import { silentLogger } from '../../src-shared/log.ts';
import { BrowserWindow, resetElectronMock } from '../support/electron-mock.ts';
import { fakeWindowFactory } from './support.ts';

beforeEach(() => resetElectronMock());

describe('AppWindows', () => {
  it('keeps one window per page, shows it when ready, focuses it when asked again', () => {
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
    win.emit('ready-to-show');
    expect(win.visible).toBe(true);
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

    w.closeFor(win.webContents as unknown as WebContents);
    expect(win.destroyed).toBe(true);
    expect(w.get('settings')).toBeUndefined();
    expect(w.owns(win.webContents as unknown as WebContents)).toBe(false);
    w.show('settings');
    expect(BrowserWindow.instances).toHaveLength(2);
  });
});
