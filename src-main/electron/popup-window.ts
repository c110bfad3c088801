/**
 * The always-on-top popup. Created hidden at start-up and loaded once, so a ring only has to send
 * the cards and show it. It never takes focus: it is only ever shown with showInactive() (never
 * show() or focus()), with no task bar entry, frameless, above ordinary windows ("floating" level; also over full-screen apps on
 * macOS). It goes on the display the user chose (primary, or the one under the pointer) in the
 * chosen corner of its work area, and its height follows the stacked cards the renderer reports.
 */
import type { BrowserWindow as BrowserWindowType, Screen } from 'electron';
import type { CallCard, LocaleView, StatusView } from '../ipc/contract.ts';
import type { PopupView } from '../core/app/ports.ts';
import type { Logger } from '../../src-shared/log.ts';
import type { PopupCorner, PopupDisplay } from '../core/settings/types.ts';
import { send } from './ipc-main.ts';
import { POPUP_MIN_HEIGHT, POPUP_WIDTH, popupBounds } from './popup-geometry.ts';

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
}

export class PopupWindow implements PopupView {
  readonly window: BrowserWindowType;
  private readonly deps: PopupWindowDeps;
  private contentHeight = POPUP_MIN_HEIGHT;
  private cards: CallCard[] = [];

  constructor(deps: PopupWindowDeps) {
    this.deps = deps;
    const platform = deps.platform ?? process.platform;
    this.window = deps.createWindow({
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
      backgroundColor: '#00000000',
      ...(platform === 'darwin' ? { type: 'panel' as const } : {}),
      webPreferences: deps.webPreferences,
    });
    // Above normal windows without being a system-modal overlay.
    this.window.setAlwaysOnTop(true, 'floating');
    this.window.setVisibleOnAllWorkspaces(true, { visibleOnFullScreen: true });
    this.window.webContents.on('render-process-gone', (_e, details) => {
      deps.logger.error('popup renderer gone; reloading', { reason: details.reason });
      void this.window.loadURL(deps.url);
    });
    void this.window
      .loadURL(deps.url)
      .catch((err: unknown) => deps.logger.error('popup page failed to load', { error: err }));
  }

  /** What popup:ready returns: the cards at the moment the page (re)loads. */
  currentCards(): CallCard[] {
    return this.cards;
  }

  show(cards: CallCard[]): void {
    this.cards = cards;
    send(this.window, 'popup:calls', cards);
    this.place();
    if (!this.window.isVisible()) this.window.showInactive();
  }

  /** The language changed: the popup says its words in the new one (shown or not). */
  sendLocale(view: LocaleView): void {
    if (!this.window.isDestroyed()) send(this.window, 'i18n:changed', view);
  }

  /** The status (a trunk warning is shown above the calls); sent whether or not the popup shows. */
  sendStatus(status: StatusView): void {
    if (!this.window.isDestroyed()) send(this.window, 'status:changed', status);
  }

  hide(): void {
    this.cards = [];
    send(this.window, 'popup:calls', []);
    if (!this.window.isDestroyed() && this.window.isVisible()) this.window.hide();
  }

  /** popup:content-size: fit the window to the cards, keeping the corner anchored. */
  setContentHeight(height: number): void {
    this.contentHeight = Math.max(POPUP_MIN_HEIGHT, Math.ceil(height));
    if (this.window.isVisible()) this.place();
  }

  /** Puts the window in the chosen corner of the chosen display's work area. */
  place(): void {
    if (this.window.isDestroyed()) return;
    const { popupDisplay, popupCorner } = this.deps.placement();
    const { screen } = this.deps;
    const display =
      popupDisplay === 'pointer'
        ? screen.getDisplayNearestPoint(screen.getCursorScreenPoint())
        : screen.getPrimaryDisplay();
    this.window.setBounds(popupBounds(display.workArea, popupCorner, this.contentHeight));
  }

  destroy(): void {
    if (!this.window.isDestroyed()) this.window.destroy();
  }
}
