/**
 * The Electron security checklist, in one place:
 * - every window: sandbox, context isolation, no Node, web security, our preload only;
 * - every web contents: navigation, redirects to elsewhere, new windows and <webview> denied; an
 *   https link the user clicked is vetted and opened in the browser instead;
 * - every permission request or check (camera, notifications from pages, geolocation...) denied;
 * - our pages get the CSP as a response header too.
 */
import type { App, Session, WebContents, WebPreferences } from 'electron';
import type { Logger } from '../../src-shared/process/log.ts';
import type { AppOrigin } from './app-origin.ts';

export function secureWebPreferences(preload: string, devTools: boolean): WebPreferences {
  return {
    preload,
    sandbox: true,
    contextIsolation: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
    devTools,
  };
}

export interface HardenOptions {
  origin: AppOrigin;
  logger: Logger;
  /** Opens a link outside the app after vetting it (https or allowed schemes only). */
  openExternal: (url: string) => void;
}

/** Denies navigation, redirects away, new windows and webviews for one web contents. */
export function hardenWebContents(contents: WebContents, options: HardenOptions): void {
  const { origin, logger, openExternal } = options;
  contents.on('will-navigate', (event, url) => {
    event.preventDefault();
    logger.warn('navigation denied', { to: describeUrl(url) });
    if (!origin.isOurs(url)) openExternal(url);
  });
  contents.on('will-redirect', (event, url) => {
    if (!origin.isOurs(url)) {
      event.preventDefault();
      logger.warn('redirect denied', { to: describeUrl(url) });
    }
  });
  contents.on('will-attach-webview', (event) => {
    event.preventDefault();
    logger.warn('webview denied');
  });
  contents.setWindowOpenHandler(({ url }) => {
    logger.warn('new window denied', { to: describeUrl(url) });
    if (!origin.isOurs(url)) openExternal(url);
    return { action: 'deny' };
  });
}

/** Applies hardenWebContents to every web contents the app ever creates. */
export function hardenAllWebContents(app: App, options: HardenOptions): void {
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, options));
}

export function denyAllPermissions(session: Session, logger: Logger): void {
  session.setPermissionRequestHandler((_contents, permission, callback) => {
    logger.warn('permission request denied', { permission });
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
}

/** Adds the CSP header to responses for our own pages (dev server included). */
export function addCspHeader(session: Session, origin: AppOrigin, csp: string): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    if (!origin.isOurs(details.url)) {
      callback({});
      return;
    }
    const headers: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(details.responseHeaders ?? {}))
      if (k.toLowerCase() !== 'content-security-policy') headers[k] = v;
    headers['Content-Security-Policy'] = [csp];
    callback({ responseHeaders: headers });
  });
}

function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`.slice(0, 120);
  } catch {
    return '(unparseable)';
  }
}
