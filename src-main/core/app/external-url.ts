/**
 * The one gate for every URL the app hands to the operating system (shell.openExternal, the CRM
 * link). Parsed with the WHATWG URL parser, never by string inspection; only https, or a scheme an
 * administrator added, passes; schemes that run code or reach local files never pass whatever the
 * settings say; credentials in URLs never pass.
 */

export type UrlCheck = { ok: true; url: string } | { ok: false; message: string };

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

/** Longest URL we open: Windows' ShellExecute and many browsers cut beyond a few KB. */
export const MAX_URL_LENGTH = 4096;

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

/** Checks that `raw` is a URL the app may open. Returns the parser's serialization, not the input. */
export function vetExternalUrl(raw: unknown, allowedSchemes: readonly string[] = []): UrlCheck {
  if (typeof raw !== 'string' || raw.length === 0)
    return { ok: false, message: 'No link to open.' };
  if (raw.length > MAX_URL_LENGTH)
    return { ok: false, message: `The link is longer than ${MAX_URL_LENGTH} characters.` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return {
      ok: false,
      message: 'The link is not a complete address (it must start with https://).',
    };
  }
  const scheme = url.protocol.replace(/:$/, '').toLowerCase();
  if (DENIED_SCHEMES.has(scheme))
    return { ok: false, message: `Links starting with "${scheme}:" are never opened.` };
  if (!allowedSchemeSet(allowedSchemes).has(scheme)) {
    return {
      ok: false,
      message: `Links starting with "${scheme}:" are not allowed; only https and schemes your administrator added.`,
    };
  }
  if (url.username !== '' || url.password !== '')
    return { ok: false, message: 'Links with a user name or password in them are not opened.' };
  if (scheme === 'https' && url.hostname === '')
    return { ok: false, message: 'The link has no host name.' };
  if (url.href.length > MAX_URL_LENGTH)
    return { ok: false, message: `The link is longer than ${MAX_URL_LENGTH} characters.` };
  return { ok: true, url: url.href };
}
