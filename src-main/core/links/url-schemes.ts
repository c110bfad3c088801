/**
 * Which URL schemes may carry a caller out of the app: the one list, used by the settings (which
 * schemes an administrator may add for CRM links) and by the gate every link passes before the OS
 * opens it (app/external-url.ts), so a scheme cannot be accepted by one and refused by the other.
 */

/** Schemes refused even when an administrator lists them: they run code, read files or leak data. */
export const DENIED_SCHEMES: ReadonlySet<string> = new Set([
  'javascript',
  'vbscript',
  'livescript',
  'data',
  'file',
  'blob',
  'filesystem',
  'about',
  'chrome',
  'chrome-extension',
  'devtools',
  'view-source',
  'jar',
  'http', // caller details would travel unencrypted
  'ftp',
  'smb',
  'nfs',
  'ws',
  'wss',
  'shell',
  'ms-msdt',
  'search-ms',
  'search',
  'ms-officecmd',
  'ms-settings',
  'res',
  'mk',
  'its',
  'ms-its',
  'mhtml',
  'x-apple.systempreferences',
]);

const SCHEME_NAME = /^[a-z][a-z0-9+.-]{0,31}$/;

/** Lower-cases and strips a trailing colon; returns null for anything that is not a scheme name. */
export function normalizeScheme(scheme: string): string | null {
  const s = scheme.trim().toLowerCase().replace(/:$/, '');
  return SCHEME_NAME.test(s) ? s : null;
}

/** The usable allowed schemes: always https, plus valid administrator additions not on the deny list. */
export function allowedSchemeSet(extra: readonly string[] = []): Set<string> {
  const out = new Set(['https']);
  for (const raw of extra) {
    if (typeof raw !== 'string') continue;
    const s = normalizeScheme(raw);
    if (s && !DENIED_SCHEMES.has(s)) out.add(s);
  }
  return out;
}
