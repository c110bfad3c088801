/**
 * The settings (with onboarding), history and dial box windows: one of each at most, created on demand with
 * the secure web preferences, shown when ready, focused when asked for again. Closing one only
 * destroys it: the app lives in the tray.
 *
 * A notification click opens History with its item selected (showHistoryAt). An open page gets
 * `history:select`; a page still loading misses that push (Electron drops what is sent before
 * its page listens), so the id is also kept for that window and the page asks for it once
 * (`history:selection`, takeSelection) after it subscribed. A page that got both selects the same
 * item; the kept id dies with its window, so the next History opened from the tray selects nothing.
 */
import type {
  BrowserWindow as BrowserWindowType,
  BrowserWindowConstructorOptions,
  WebContents,
  WebPreferences,
} from 'electron';
import type { EventChannel, IpcEventMap } from '../ipc/contract.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { AppOrigin, PageName } from './app-origin.ts';
import { send } from './ipc-main.ts';
import { WINDOW_SIZES } from './window-sizes.ts';

export type WindowPage = Exclude<PageName, 'popup'>;

const SIZES: Record<WindowPage, { width: number; height: number; title: string }> = WINDOW_SIZES;

export interface AppWindowsDeps {
  createWindow: (options: BrowserWindowConstructorOptions) => BrowserWindowType;
  origin: AppOrigin;
  webPreferences: WebPreferences;
  logger: Logger;
  icon?: string;
}

export class AppWindows {
  private readonly deps: AppWindowsDeps;
  private readonly open = new Map<WindowPage, BrowserWindowType>();
  /** The History item a notification click asked for, and the History window it was for. */
  private selection: { window: BrowserWindowType; id: string } | null = null;

  constructor(deps: AppWindowsDeps) {
    this.deps = deps;
  }

  show(page: WindowPage): BrowserWindowType {
    const existing = this.open.get(page);
    if (existing && !existing.isDestroyed()) {
      if (existing.isMinimized()) existing.restore();
      existing.show();
      existing.focus();
      return existing;
    }
    const size = SIZES[page];
    const win = this.deps.createWindow({
      ...size,
      minWidth: Math.min(420, size.width),
      minHeight: Math.min(420, size.height),
      show: false,
      autoHideMenuBar: true,
      ...(this.deps.icon ? { icon: this.deps.icon } : {}),
      webPreferences: this.deps.webPreferences,
    });
    this.open.set(page, win);
    win.once('ready-to-show', () => {
      win.show();
      win.focus();
    });
    win.on('closed', () => {
      if (this.open.get(page) === win) this.open.delete(page);
      if (this.selection?.window === win) this.selection = null;
    });
    win.webContents.on('render-process-gone', (_e, details) =>
      this.deps.logger.error('window renderer gone', { page, reason: details.reason }),
    );
    void win
      .loadURL(this.deps.origin.pageUrl(page))
      .catch((err: unknown) => this.deps.logger.error('page failed to load', { page, error: err }));
    return win;
  }

  /** History, shown (or opened) with the item `id` selected: a notification was clicked. */
  showHistoryAt(id: string): void {
    const win = this.show('history');
    this.selection = { window: win, id };
    send(win, 'history:select', id);
  }

  /** `history:selection`: the item asked for while this History page was loading, once. */
  takeSelection(contents: WebContents): string | null {
    const s = this.selection;
    if (!s || s.window.isDestroyed() || s.window.webContents !== contents) return null;
    this.selection = null;
    return s.id;
  }

  get(page: WindowPage): BrowserWindowType | undefined {
    const w = this.open.get(page);
    return w && !w.isDestroyed() ? w : undefined;
  }

  /** True when `contents` is one of these windows' web contents. */
  owns(contents: WebContents): boolean {
    for (const w of this.open.values())
      if (!w.isDestroyed() && w.webContents === contents) return true;
    return false;
  }

  /** window:close from a page: close the window that asked. */
  closeFor(contents: WebContents): void {
    for (const w of this.open.values())
      if (!w.isDestroyed() && w.webContents === contents) w.close();
  }

  broadcast<C extends EventChannel>(channel: C, ...args: Parameters<IpcEventMap[C]>): void {
    for (const w of this.open.values()) send(w, channel, ...args);
  }

  closeAll(): void {
    for (const w of this.open.values()) if (!w.isDestroyed()) w.destroy();
    this.open.clear();
  }
}
