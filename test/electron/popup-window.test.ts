import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { Screen, WebContents } from 'electron';
import type { PopupCorner, PopupDisplay } from '../../src-main/core/settings/types.ts';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { POPUP_MARGIN, POPUP_WIDTH, popupBounds } from '../../src-main/electron/popup-geometry.ts';
import { DesktopHealth } from '../../src-main/core/app/desktop-health.ts';
import {
  POPUP_BACKGROUND,
  PopupWindow,
  type PopupWindowDeps,
} from '../../src-main/electron/popup-window.ts';
import { PLAIN_ENGLISH } from '../../src-shared/i18n/locale-state.ts';
import { secureWebPreferences } from '../../src-main/electron/security.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { BrowserWindow, resetElectronMock, screen } from '../support/electron-mock.ts';
import { card, fakeWindowFactory } from './support.ts';

function popup(
  placement: { popupDisplay: PopupDisplay; popupCorner: PopupCorner },
  extra: Partial<PopupWindowDeps> = {},
) {
  const factory = fakeWindowFactory();
  const p = new PopupWindow({
    createWindow: factory.create,
    screen: screen as unknown as Screen,
    url: new AppOrigin(null).pageUrl('popup'),
    webPreferences: secureWebPreferences('/app/dist/preload/preload.cjs', false),
    placement: () => placement,
    logger: silentLogger,
    platform: 'win32',
    ...extra,
  });
  return { p, win: factory.last(), factory };
}

const corner = { popupDisplay: 'primary', popupCorner: 'bottom-right' } as const;

/** The windows' pages load (the fake loads on a later tick, as Electron does). */
const pagesLoad = () => new Promise<void>((resolve) => setImmediate(resolve));

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

  it('shows inactive, never focused, in the bottom-right corner of the primary work area', async () => {
    const { p, win } = popup({ popupDisplay: 'primary', popupCorner: 'bottom-right' });
    await pagesLoad();
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

  it('goes to the display under the pointer when chosen, in the chosen corner', async () => {
    screen.cursor = { x: 2500, y: 300 }; // on the second display
    const { p, win } = popup({ popupDisplay: 'pointer', popupCorner: 'top-left' });
    await pagesLoad();
    p.show([card('c1')]);
    const wa = screen.displays[1]!.workArea;
    expect(win.bounds).toMatchObject({ x: wa.x + POPUP_MARGIN, y: wa.y + POPUP_MARGIN });
  });

  it('fits its height to the stacked cards, keeping the corner anchored and inside the work area', async () => {
    const { p, win } = popup({ popupDisplay: 'primary', popupCorner: 'bottom-right' });
    await pagesLoad();
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

  it('is opaque in the page’s own colour (a transparent colour shows black on Windows), and a tool window there (not in Alt+Tab)', () => {
    const { win } = popup(corner);
    expect(win.options.backgroundColor).toBe(POPUP_BACKGROUND.light);
    expect(win.options.transparent).toBeUndefined();
    expect(win.options.type).toBe('toolbar');
    const dark = popup(corner, { platform: 'darwin', dark: () => true }).win;
    expect(dark.options.backgroundColor).toBe(POPUP_BACKGROUND.dark);
    expect(dark.options.type).toBe('panel');
    expect(popup(corner, { platform: 'linux' }).win.options.type).toBeUndefined();
  });

  it('cannot be closed for good: Alt+F4 / Cmd+W hide it, and the next ring shows it again', async () => {
    const closed: string[] = [];
    const { p, win } = popup(corner, { onUserClose: () => closed.push('closed') });
    await pagesLoad();
    p.show([card('c1')]);
    expect(win.close()).toBe(false); // the user's close: prevented
    expect(win.destroyed).toBe(false);
    expect(win.visible).toBe(false);
    expect(closed).toEqual(['closed']);
    p.show([card('c2')]);
    expect(win.visible).toBe(true);
    expect(win.calls.filter((c) => c === 'showInactive')).toHaveLength(2);
    expect(BrowserWindow.instances).toHaveLength(1);
  });

  it('a window destroyed anyway is made anew for the next ring, loaded, and is the one IPC trusts', async () => {
    const { p, win, factory } = popup(corner);
    const first = win.webContents as unknown as WebContents;
    expect(p.owns(first)).toBe(true);
    win.destroy(); // e.g. the window system killed it
    expect(() => win.isVisible()).toThrow('Object has been destroyed');
    p.sendStatus({
      state: 'connected',
      paused: false,
      doNotDisturb: false,
      missedCount: 0,
      demo: false,
    });
    p.show([card('c3')]);
    const second = factory.last();
    expect(second).not.toBe(win);
    // Not shown blank: only once its page has loaded.
    expect(second.visible).toBe(false);
    await pagesLoad();
    expect(second.visible).toBe(true);
    expect(second.calls).toEqual(['showInactive']);
    expect(second.loadedUrl).toBe('app://screenpop/popup.html');
    expect(p.currentCards()).toEqual([card('c3')]);
    expect(p.owns(first)).toBe(false);
    expect(p.owns(second.webContents as unknown as WebContents)).toBe(true);
  });

  it('a popup that cannot be shown says so in the status, and the next one that shows clears it', async () => {
    const health = new DesktopHealth(silentLogger);
    const { p, win, factory } = popup(corner, { health });
    await pagesLoad();
    win.broken = new Error('the window system refused');
    p.show([card('c4')]); // never throws to the presenter
    expect(health.list(PLAIN_ENGLISH.current())).toEqual([
      {
        id: 'popup',
        reason: 'The call popup could not be shown.',
        remedy: expect.stringContaining('Notifications still show each call.'),
      },
    ]);
    p.show([card('c4')]); // a new window, which works
    await pagesLoad();
    expect(factory.last()).not.toBe(win);
    expect(factory.last().visible).toBe(true);
    expect(health.has('popup')).toBe(false);
  });

  it('lets its window close when Screenpop quits, and makes no new one after', () => {
    const { p, win } = popup(corner);
    p.quitting();
    expect(win.close()).toBe(true);
    p.show([card('c5')]);
    expect(BrowserWindow.instances).toHaveLength(1);
  });

  it('released for an update that then fails to install (macOS), the next ring makes a new popup and shows it', async () => {
    const { p, win, factory } = popup(corner);
    await pagesLoad();
    p.release(); // quitAndInstall closes every window first
    expect(win.close()).toBe(true);
    // Squirrel.Mac reports an error; the app carries on and a call rings.
    p.show([card('c6')]);
    await pagesLoad();
    expect(BrowserWindow.instances).toHaveLength(2);
    expect(factory.last().visible).toBe(true);
    // It is the popup again: the user's close only hides it.
    expect(factory.last().close()).toBe(false);
  });

  it('a new popup is shown only once its page has loaded, never blank', async () => {
    const { p, win } = popup(corner);
    p.show([card('c7')]); // a ring right after start-up, or on a remade window
    expect(win.calls).toEqual([]);
    expect(p.currentCards()).toEqual([card('c7')]); // what popup:ready gives the loading page
    await pagesLoad();
    expect(win.calls).toEqual(['showInactive']);
    expect(win.webContents.lastSent('popup:calls')).toEqual([[card('c7')]]);
  });

  it('a page that fails to load is said in the status (the popup waits for its page)', async () => {
    const health = new DesktopHealth(silentLogger);
    BrowserWindow.failLoads = true;
    const { p } = popup(corner, { health });
    p.show([card('c9')]);
    await pagesLoad();
    expect(health.has('popup')).toBe(true);
  });

  it('a ring that ended while the page loaded shows nothing', async () => {
    const { p, win } = popup(corner);
    p.show([card('c8')]);
    p.hide();
    await pagesLoad();
    expect(win.calls).toEqual([]);
  });

  it('keeps rendering while hidden, so it never shows the last caller’s card for a frame', () => {
    const { win } = popup(corner);
    expect(win.options.webPreferences).toMatchObject({ backgroundThrottling: false });
  });

  it('sends the attended transfers under way to its page, shown or hidden; nothing to a window destroyed', async () => {
    const { p, win } = popup(corner);
    await pagesLoad();
    const list = [{ callId: 'c1', target: '204', targetName: 'Bob Stone', since: 1 }];
    p.sendConsultations(list);
    expect(win.webContents.lastSent('calls:consultations-changed')).toEqual([list]);
    win.destroy();
    expect(() => p.sendConsultations([])).not.toThrow();
  });

  it('hides and clears the cards', async () => {
    const { p, win } = popup({ popupDisplay: 'primary', popupCorner: 'top-right' });
    await pagesLoad();
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
