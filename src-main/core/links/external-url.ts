/**
 * The one gate for every URL the app hands to the operating system (shell.openExternal, the CRM
 * link). Parsed with the WHATWG URL parser, never by string inspection; only https, or a scheme an
 * administrator added, passes; schemes that run code or reach local files never pass whatever the
 * settings say; credentials in URLs never pass.
 */

import { DENIED_SCHEMES, allowedSchemeSet } from './url-schemes.ts';
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';
import { english, phrase, type Words } from '../../../src-shared/i18n/phrase.ts';

export { DENIED_SCHEMES, allowedSchemeSet, normalizeScheme } from './url-schemes.ts';

/**
 * A URL the app may open, or why not: as catalogue phrases (`words`, said by the edge in the
 * user's language: the Settings window's CRM preview) and in English (`message`, for logs).
 */
export type UrlCheck = { ok: true; url: string } | UrlRefusal;
export interface UrlRefusal {
  ok: false;
  words: Words;
  message: string;
}

/** A refusal in the words of the catalogue message `id`. */
export function urlRefusal(id: MessageId, values?: Record<string, string>): UrlRefusal {
  const words = [phrase(id, values)];
  return { ok: false, words, message: english(words) };
}

/** Longest URL we open: Windows' ShellExecute and many browsers cut beyond a few KB. */
export const MAX_URL_LENGTH = 4096;

/** Checks that `raw` is a URL the app may open. Returns the parser's serialization, not the input. */
export function vetExternalUrl(raw: unknown, allowedSchemes: readonly string[] = []): UrlCheck {
  const tooLong = () => urlRefusal('status.link.too-long', { max: String(MAX_URL_LENGTH) });
  if (typeof raw !== 'string' || raw.length === 0) return urlRefusal('status.link.none');
  if (raw.length > MAX_URL_LENGTH) return tooLong();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return urlRefusal('status.link.invalid');
  }
  const scheme = url.protocol.replace(/:$/, '').toLowerCase();
  if (DENIED_SCHEMES.has(scheme)) return urlRefusal('status.link.scheme-denied', { scheme });
  if (!allowedSchemeSet(allowedSchemes).has(scheme))
    return urlRefusal('status.link.scheme-not-allowed', { scheme });
  if (url.username !== '' || url.password !== '') return urlRefusal('status.link.credentials');
  if (scheme === 'https' && url.hostname === '') return urlRefusal('status.link.no-host');
  if (url.href.length > MAX_URL_LENGTH) return tooLong();
  return { ok: true, url: url.href };
}
