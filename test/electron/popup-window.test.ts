import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { Screen } from 'electron';
import type { PopupCorner, PopupDisplay } from '../../src-main/core/settings/types.ts';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { POPUP_MARGIN, POPUP_WIDTH, popupBounds } from '../../src-main/electron/popup-geometry.ts';
import { PopupWindow } from '../../src-main/electron/popup-window.ts';
import { secureWebPreferences } from '../../src-main/electron/security.ts';
import { silentLogger } from '../../src-shared/log.ts';
import { resetElectronMock, screen } from '../support/electron-mock.ts';
import { card, fakeWindowFactory } from './support.ts';

function popup(placement: { popupDisplay: PopupDisplay; popupCorner: PopupCorner }) {
  const factory = fakeWindowFactory();
  const p = new PopupWindow({
    createWindow: factory.create,
    screen: screen as unknown as Screen,
    url: new AppOrigin(null).pageUrl('popup'),
    webPreferences: secureWebPreferences('/app/dist/preload/preload.cjs', false),
    placement: () => placement,
    logger: silentLogger,
    platform: 'win32',
  });
  return { p, win: factory.last() };
}

beforeEach(() => resetElectronMock());

describe('PopupWindow', () => {
  it('is created hidden, frameless, off the task bar, above other windows, loaded once', () => {
    const { win } = popup({ popupDisplay: 'primary', popupCorner: 'bottom-right' });
    expect(win.options).toMatchObject({
      show: false,
      frame: false,
      skipTaskbar: true,
      alwaysOnTop: true,
      resizable: false,
    });
    expect(win.options.webPreferences).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
    });
    expect(win.alwaysOnTop).toEqual({ flag: true, level: 'floating' });
    expect(win.loadedUrl).toBe('app://screenpop/popup.html');
    expect(win.visible).toBe(false);
  });

  it('shows inactive, never focused, in the bottom-right corner of the primary work area', () => {
    const { p, win } = popup({ popupDisplay: 'primary', popupCorner: 'bottom-right' });
    p.show([card('c1')]);
    expect(win.calls).toEqual(['showInactive']);
    expect(win.focused).toBe(false);
    expect(win.webContents.lastSent('popup:calls')).toEqual([[card('c1')]]);
    const wa = screen.displays[0]!.workArea;
    expect(win.bounds.x + win.bounds.width).toBe(wa.x + wa.width - POPUP_MARGIN);
    expect(win.bounds.y + win.bounds.height).toBe(wa.y + wa.height - POPUP_MARGIN);
    expect(win.bounds.width).toBe(POPUP_WIDTH);
    p.show([card('c1'), card('c2')]); // already visible: only the cards change
    expect(win.calls).toEqual(['showInactive']);
  });

  it('goes to the display under the pointer when chosen, in the chosen corner', () => {
    screen.cursor = { x: 2500, y: 300 }; // on the second display
    const { p, win } = popup({ popupDisplay: 'pointer', popupCorner: 'top-left' });
    p.show([card('c1')]);
    const wa = screen.displays[1]!.workArea;
    expect(win.bounds).toMatchObject({ x: wa.x + POPUP_MARGIN, y: wa.y + POPUP_MARGIN });
  });

  it('fits its height to the stacked cards, keeping the corner anchored and inside the work area', () => {
    const { p, win } = popup({ popupDisplay: 'primary', popupCorner: 'bottom-right' });
    p.show([card('c1')]);
    const wa = screen.displays[0]!.workArea;
    p.setContentHeight(330.4);
    expect(win.bounds.height).toBe(331);
    expect(win.bounds.y + win.bounds.height).toBe(wa.y + wa.height - POPUP_MARGIN);
    p.setContentHeight(50_000);
    expect(win.bounds.height).toBe(wa.height - 2 * POPUP_MARGIN);
    expect(win.bounds.y).toBe(wa.y + POPUP_MARGIN);
    expect(win.calls).toEqual(['showInactive']);
  });

  it('hides and clears the cards', () => {
    const { p, win } = popup({ popupDisplay: 'primary', popupCorner: 'top-right' });
    p.show([card('c1')]);
    p.hide();
    expect(win.visible).toBe(false);
    expect(p.currentCards()).toEqual([]);
    expect(win.webContents.lastSent('popup:calls')).toEqual([[]]);
  });
});

describe('popupBounds', () => {
  const wa = { x: 100, y: 50, width: 1000, height: 700 };
  it.each([
    ['top-left', { x: 112, y: 62 }],
    ['top-right', { x: 100 + 1000 - 12 - 360, y: 62 }],
    ['bottom-left', { x: 112, y: 50 + 700 - 12 - 200 }],
    ['bottom-right', { x: 100 + 1000 - 12 - 360, y: 50 + 700 - 12 - 200 }],
  ] as const)('%s', (corner, at) => {
    expect(popupBounds(wa, corner, 200)).toEqual({ ...at, width: 360, height: 200 });
  });
});
