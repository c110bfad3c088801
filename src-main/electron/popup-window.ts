/**
 * The always-on-top popup. Created hidden at start-up and loaded once, so a ring only has to send
 * the cards and show it. It cannot be lost: the window system's close (Alt+F4, Cmd+W) only hides
 * it, a window destroyed anyway is made anew for the next call, and a popup that cannot be shown
 * says so in the status (DesktopHealth) instead of failing silently. It never takes focus: it is only ever shown with showInactive() (never
 * show() or focus()), with no task bar entry, frameless, above ordinary windows ("floating" level; also over full-screen apps on
 * macOS). It goes on the display the user chose (primary, or the one under the pointer) in the
 * chosen corner of its work area, and its height follows the stacked cards the renderer reports.
 */
import type { BrowserWindow as BrowserWindowType, Screen, WebContents } from 'electron';
import type { CallCard, ConsultationView, LocaleView, StatusView } from '../ipc/contract.ts';
import type { DesktopHealth, DesktopProblemWords } from '../core/app/desktop-health.ts';
import type { PopupView } from '../core/ports/ports.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { PopupCorner, PopupDisplay } from '../core/settings/types.ts';
import { send } from './ipc-main.ts';
import { POPUP_MIN_HEIGHT, POPUP_WIDTH, popupBounds } from './popup-geometry.ts';

/**
 * The page's own background (--bg in src-renderer/shared/theme.css, light and dark), opaque:
 * without `transparent: true` a transparent colour is drawn black on Windows before the page paints.
 */
export const POPUP_BACKGROUND = { light: '#f4f5f7', dark: '#15171c' } as const;

export interface PopupPlacement {
  popupDisplay: PopupDisplay;
  popupCorner: PopupCorner;
}

export interface PopupWindowDeps {
  createWindow: (options: Electron.BrowserWindowConstructorOptions) => BrowserWindowType;
  screen: Screen;
  url: string;
  webPreferences: Electron.WebPreferences;
  placement: () => PopupPlacement;
  logger: Logger;
  platform?: NodeJS.Platform;
  /** Where a popup that cannot be shown is said (the status, hence the tray and Settings). */
  health?: DesktopHealth;
  /** The user closed the popup through the window system (Alt+F4, Cmd+W): as dismissing it. */
  onUserClose?: () => void;
  /** The OS uses dark colours (nativeTheme.shouldUseDarkColors): the window's first colour. */
  dark?: () => boolean;
}

const POPUP_WORDS: DesktopProblemWords = {
  reason: [phrase('desktop.problem.popup.reason')],
  remedy: [phrase('desktop.problem.popup.remedy')],
};

export class PopupWindow implements PopupView {
  private readonly deps: PopupWindowDeps;
  private readonly platform: NodeJS.Platform;
  private win: BrowserWindowType | null = null;
  /**
   * Set for an installer (release()) or for quitting (quitting()): the window may then close for
   * real. After release() alone the app may live on (a macOS update that failed to install): the
   * next call makes a new window. After quitting() no new one is made.
   */
  private releasing = false;
  private quittingNow = false;
  /** The current window's page has loaded: until then it is not shown (it would be blank). */
  private pageLoaded = false;
  /** A show() came while the page was loading: shown when it has loaded. */
  private showWhenLoaded = false;
  private contentHeight = POPUP_MIN_HEIGHT;
  private cards: CallCard[] = [];

  constructor(deps: PopupWindowDeps) {
    this.deps = deps;
    this.platform = deps.platform ?? process.platform;
    this.win = this.create();
  }

  /**
   * The popup's window; a new one when the last was destroyed. The popup cannot be lost: closing
   * it (Alt+F4, Cmd+W) only hides it, and a window destroyed anyway is made anew on the next use.
   */
  get window(): BrowserWindowType {
    if (!this.win || this.win.isDestroyed()) {
      if (this.quittingNow) throw new Error('the popup is closed: Screenpop is quitting');
      // Released for an installer that did not run after all (the app is still here): a call
      // needs the popup again.
      this.releasing = false;
      this.deps.logger.warn('popup window gone; making a new one');
      this.win = this.create();
    }
    return this.win;
  }

  /** True when `contents` is the popup's page (IPC sender check). */
  owns(contents: WebContents): boolean {
    const win = this.win;
    return win !== null && !win.isDestroyed() && win.webContents === contents;
  }

  /** What popup:ready returns: the cards at the moment the page (re)loads. */
  currentCards(): CallCard[] {
    return this.cards;
  }

  show(cards: CallCard[]): void {
    this.cards = cards;
    try {
      const win = this.window;
      send(win, 'popup:calls', cards);
      if (!this.pageLoaded) {
        // A new window whose page is still loading would show blank: it shows when loaded (the
        // page asks for the cards then: popup:ready).
        this.showWhenLoaded = true;
        return;
      }
      this.place();
      if (!win.isVisible()) win.showInactive();
      this.deps.health?.clear('popup');
    } catch (err) {
      // A window that throws is dropped: the next call makes a new one.
      this.deps.logger.error('popup could not be shown', { error: err });
      this.drop();
      if (!this.releasing) this.deps.health?.report('popup', POPUP_WORDS);
    }
  }

  /** The language changed: the popup says its words in the new one (shown or not). */
  sendLocale(view: LocaleView): void {
    if (this.win && !this.win.isDestroyed()) send(this.win, 'i18n:changed', view);
  }

  /** The attended transfers under way (Complete and Cancel on the cards); sent shown or not. */
  sendConsultations(list: ConsultationView[]): void {
    if (this.win && !this.win.isDestroyed()) send(this.win, 'calls:consultations-changed', list);
  }

  /** The status (a trunk warning is shown above the calls); sent whether or not the popup shows. */
  sendStatus(status: StatusView): void {
    if (this.win && !this.win.isDestroyed()) send(this.win, 'status:changed', status);
  }

  hide(): void {
    this.cards = [];
    this.showWhenLoaded = false;
    const win = this.win;
    if (!win || win.isDestroyed()) return;
    try {
      send(win, 'popup:calls', []);
      if (win.isVisible()) win.hide();
    } catch (err) {
      this.deps.logger.error('popup could not be hidden', { error: err });
      this.drop();
    }
  }

  /** popup:content-size: fit the window to the cards, keeping the corner anchored. */
  setContentHeight(height: number): void {
    this.contentHeight = Math.max(POPUP_MIN_HEIGHT, Math.ceil(height));
    if (this.win && !this.win.isDestroyed() && this.win.isVisible()) this.place();
  }

  /** Puts the window in the chosen corner of the chosen display's work area. */
  place(): void {
    const win = this.win;
    if (!win || win.isDestroyed()) return;
    const { popupDisplay, popupCorner } = this.deps.placement();
    const { screen } = this.deps;
    const display =
      popupDisplay === 'pointer'
        ? screen.getDisplayNearestPoint(screen.getCursorScreenPoint())
        : screen.getPrimaryDisplay();
    win.setBounds(popupBounds(display.workArea, popupCorner, this.contentHeight));
  }

  /**
   * An update is about to install, which closes every window first: from now on the window may
   * close. Should the app live on (the install failed), the next call makes a new window.
   */
  release(): void {
    this.releasing = true;
  }

  /** Screenpop is quitting: the window may close, and no new one is made. */
  quitting(): void {
    this.releasing = true;
    this.quittingNow = true;
  }

  destroy(): void {
    this.quitting();
    this.drop();
  }

  private drop(): void {
    const win = this.win;
    this.win = null;
    try {
      if (win && !win.isDestroyed()) win.destroy();
    } catch {
      // Already gone.
    }
  }

  /** The page did not load: a call could not be shown (it waits for the page), so the status says so. */
  private loadFailed(win: BrowserWindowType, err: unknown): void {
    this.deps.logger.error('popup page failed to load', { error: err });
    if (this.win === win && !this.releasing) this.deps.health?.report('popup', POPUP_WORDS);
  }

  private create(): BrowserWindowType {
    const { deps } = this;
    const win = deps.createWindow({
      show: false,
      width: POPUP_WIDTH,
      height: POPUP_MIN_HEIGHT,
      frame: false,
      resizable: false,
      movable: false,
      minimizable: false,
      maximizable: false,
      fullscreenable: false,
      skipTaskbar: true,
      alwaysOnTop: true,
      // Focusable so that a user who clicks into it can use the keyboard (Esc, Enter, Tab); it is
      // never focused by us: showInactive() leaves the user's window active.
      focusable: true,
      hasShadow: true,
      title: 'Incoming call',
      backgroundColor: deps.dark?.() ? POPUP_BACKGROUND.dark : POPUP_BACKGROUND.light,
      // macOS: a panel floats over full-screen apps. Windows: a tool window, which Alt+Tab does
      // not list (skipTaskbar only keeps it off the task bar).
      ...(this.platform === 'darwin' ? { type: 'panel' as const } : {}),
      ...(this.platform === 'win32' ? { type: 'toolbar' as const } : {}),
      // A hidden popup keeps rendering, so the cleared cards are painted before it shows again:
      // otherwise Chromium throttles the hidden page and its first frame is the last caller's.
      webPreferences: { ...deps.webPreferences, backgroundThrottling: false },
    });
    this.pageLoaded = false;
    this.showWhenLoaded = false;
    win.webContents.on('did-finish-load', () => {
      if (this.win !== win) return;
      this.pageLoaded = true;
      if (!this.showWhenLoaded) return;
      this.showWhenLoaded = false;
      if (this.cards.length > 0) this.show(this.cards);
    });
    // Above normal windows without being a system-modal overlay.
    win.setAlwaysOnTop(true, 'floating');
    win.setVisibleOnAllWorkspaces(true, { visibleOnFullScreen: true });
    // Alt+F4 / Cmd+W / the window manager's close: hide, never destroy (unless quitting).
    win.on('close', (event) => {
      if (this.releasing) return;
      event.preventDefault();
      deps.logger.info('popup closed by the user; hidden');
      try {
        if (win.isVisible()) win.hide();
      } catch (err) {
        deps.logger.error('popup could not be hidden', { error: err });
      }
      deps.onUserClose?.();
    });
    win.on('closed', () => {
      if (this.win === win) this.win = null;
    });
    win.webContents.on('render-process-gone', (_e, details) => {
      deps.logger.error('popup renderer gone; reloading', { reason: details.reason });
      if (this.win === win) this.pageLoaded = false;
      if (!win.isDestroyed())
        void win.loadURL(deps.url).catch((err: unknown) => this.loadFailed(win, err));
    });
    void win.loadURL(deps.url).catch((err: unknown) => this.loadFailed(win, err));
    return win;
  }
}
