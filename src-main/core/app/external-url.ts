/**
 * The one gate for every URL the app hands to the operating system (shell.openExternal, the CRM
 * link). Parsed with the WHATWG URL parser, never by string inspection; only https, or a scheme an
 * administrator added, passes; schemes that run code or reach local files never pass whatever the
 * settings say; credentials in URLs never pass.
 */

import { DENIED_SCHEMES, allowedSchemeSet } from '../url-schemes.ts';

export { DENIED_SCHEMES, allowedSchemeSet, normalizeScheme } from '../url-schemes.ts';

export type UrlCheck = { ok: true; url: string } | { ok: false; message: string };

/** Longest URL we open: Windows' ShellExecute and many browsers cut beyond a few KB. */
export const MAX_URL_LENGTH = 4096;

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
