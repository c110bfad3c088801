/**
 * Who the app is to Windows' notifications, and what a click on a toast does.
 *
 * Since Electron 42 the first `Notification.isSupported()` on Windows makes sure a Start Menu
 * shortcut carries the app's AppUserModelID and Toast Activator CLSID: it writes its own per-user
 * shortcut, named after the app, and the CLSID's activation key (HKCU). Hence:
 * - the CLSID is fixed (`setToastActivatorCLSID`, before any notification), not a random one per
 *   run: the shortcut and key written by one start stay right for the next, instead of being
 *   rewritten at each;
 * - an unpackaged run (`npm start`) is another app to Windows: its own name and AppUserModelID
 *   (and CLSID), so its shortcut ("Screenpop (development)") points at electron.exe without
 *   touching the installed Screenpop's, which has the same name and id. Its data folder stays the
 *   one it had (userData is kept);
 * - a toast clicked in the Action Centre after its Notification object is gone (another start of
 *   the app, or the app started by the click) comes through `Notification.handleActivation`: it
 *   opens the History, where that call is (a live notification's own 'click' brings up the popup,
 *   and the activation is then left alone).
 * What an uninstall leaves behind (the shortcut Electron wrote for an all-users or MSI install) is
 * in README, "What an uninstall removes".
 */
import type { ActivationArguments } from 'electron';
import { APP_ID } from './app-id.ts';
import type { Logger } from '../../src-shared/process/log.ts';

/** The installed app's Toast Activator CLSID (never change: Windows keeps it in the shortcut). */
export const TOAST_ACTIVATOR_CLSID = '{7406997E-3567-4C0C-A64A-5783965586A6}';
/** An unpackaged run's, so that `npm start` never claims the installed app's activator. */
export const DEV_TOAST_ACTIVATOR_CLSID = '{F9B1222A-F287-4F83-ACBF-ACDC32BEDF33}';
export const DEV_APP_ID = `${APP_ID}.dev`;
export const DEV_APP_NAME = 'Screenpop (development)';

export interface AppIdentity {
  /** The name Windows shows (and the shortcut Electron writes); null: the package's own. */
  name: string | null;
  appUserModelId: string;
  toastActivatorClsid: string;
}

export function appIdentity(packaged: boolean): AppIdentity {
  return packaged
    ? { name: null, appUserModelId: APP_ID, toastActivatorClsid: TOAST_ACTIVATOR_CLSID }
    : {
        name: DEV_APP_NAME,
        appUserModelId: DEV_APP_ID,
        toastActivatorClsid: DEV_TOAST_ACTIVATOR_CLSID,
      };
}

export interface IdentityApp {
  isPackaged: boolean;
  setAppUserModelId(id: string): void;
  setName(name: string): void;
  getPath(name: 'userData'): string;
  setPath(name: 'userData', path: string): void;
  setToastActivatorCLSID(id: string): void;
}

/**
 * Before 'ready' and before any notification: the app's id (every OS: a no-op but on Windows),
 * and on Windows its name and Toast Activator CLSID.
 */
export function applyAppIdentity(app: IdentityApp, platform: NodeJS.Platform): AppIdentity {
  const identity = appIdentity(app.isPackaged);
  app.setAppUserModelId(identity.appUserModelId);
  if (platform !== 'win32') return identity;
  if (identity.name) {
    const userData = app.getPath('userData');
    app.setName(identity.name);
    app.setPath('userData', userData);
  }
  app.setToastActivatorCLSID(identity.toastActivatorClsid);
  return identity;
}

export interface ToastActivationDeps {
  platform: NodeJS.Platform;
  /** Notification.handleActivation (Windows). */
  handleActivation: (callback: (details: ActivationArguments) => void) => void;
  /** Whether a live notification is held (its own 'click' answers the user). */
  holdsLiveNotifications: () => boolean;
  /** A toast whose Notification is gone was clicked: show where its call is. */
  openHistory: () => void;
  logger: Logger;
}

/** Windows: a click on a toast that outlived its Notification object opens the History. */
export function watchToastActivation(d: ToastActivationDeps): void {
  if (d.platform !== 'win32') return;
  d.handleActivation((details) => {
    try {
      if (d.holdsLiveNotifications()) return;
      d.logger.info('toast activated after its notification was gone', { type: details.type });
      d.openHistory();
    } catch (err) {
      d.logger.error('toast activation failed', { error: err });
    }
  });
}
