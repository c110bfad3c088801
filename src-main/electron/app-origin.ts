import { isLoopbackHost } from '../../src-shared/net/loopback.ts';
/**
 * Where the app's own pages come from. Packaged and `npm start` builds serve dist/renderer/ over a
 * privileged custom scheme, app://screenpop/ (Electron's advice over file://: with the
 * grantFileProtocolExtraPrivileges fuse off, file:// pages are treated like a browser treats them and
 * module scripts would not load). In development SCREENPOP_DEV_URL may point at Vite's dev server on
 * this computer. Nothing else is "ours": not file://, not any other host.
 */
export const APP_SCHEME = 'app';
export const APP_HOST = 'screenpop';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

export type PageName = 'popup' | 'settings' | 'history' | 'dial';

/** The Vite dev server, only when not packaged and only on loopback. */
export function devServerOrigin(raw: string | undefined, packaged: boolean): string | null {
  if (packaged || !raw) return null;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' || !isLoopbackHost(u.hostname)) return null;
    return u.origin;
  } catch {
    return null;
  }
}

export class AppOrigin {
  readonly devOrigin: string | null;

  constructor(devOrigin: string | null) {
    this.devOrigin = devOrigin;
  }

  pageUrl(page: PageName): string {
    return `${this.devOrigin ?? APP_ORIGIN}/${page}.html`;
  }

  /** Which page `url` is, when it is one of ours (path exactly /<page>.html). */
  pageOf(url: string): PageName | null {
    if (!this.isOurs(url)) return null;
    const path = new URL(url).pathname;
    const m = /^\/(popup|settings|history|dial)\.html$/.exec(path);
    return m ? (m[1] as PageName) : null;
  }

  /** True for a URL on our own origin (the exact origin, parsed, never a prefix test). */
  isOurs(url: string): boolean {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    if (u.protocol === `${APP_SCHEME}:`) return u.host === APP_HOST;
    return this.devOrigin !== null && u.origin === this.devOrigin;
  }
}
