import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { toE164 } from '../events/numbers.ts';
import { displayText, truncateCodePoints } from './text.ts';
import { MAX_EXTENSION_DIGITS } from '../../../src-shared/extension-number.ts';

/**
 * Numbers as the directory matches and the popup shows them. Telephone numbers are normalized to
 * E.164 with libphonenumber-js and the user's default region, so "(415) 555-0123" in a contacts
 * file matches "+14155550123" from the service. Short numbers (extensions) are not telephone numbers
 * and are matched on their digits.
 */

export function regionOf(code: string | undefined): CountryCode | undefined {
  const c = (code ?? '').trim().toUpperCase();
  return /^[A-Z]{2}$/.test(c) ? (c as CountryCode) : undefined;
}

function digitsOf(text: string): string {
  return text.replace(/[^0-9]/g, '');
}

function parse(text: string, region: string | undefined) {
  try {
    const p = parsePhoneNumberFromString(text, regionOf(region));
    return p && p.isPossible() ? p : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A matching key for `raw`: E.164 for a possible telephone number, `ext:<digits>` for a short
 * number, null for text with no digits. Keys are equal exactly when the numbers are the same.
 */
export function normalizeNumber(raw: unknown, region?: string): string | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim().slice(0, 64);
  const digits = digitsOf(text);
  if (digits.length === 0) return null;
  if (digits.length <= MAX_EXTENSION_DIGITS && !text.startsWith('+')) return `ext:${digits}`;
  const e164 = toE164(text, (region ?? '').trim().toUpperCase());
  if (e164) return e164;
  return text.startsWith('+') ? `+${digits}` : `raw:${digits}`;
}

/** Longest caller number shown; longer caller text is cut and ends with an ellipsis. */
const MAX_SHOWN = 64;

/**
 * `raw` formatted for reading: national format inside the default region, international outside.
 * Text longer than 64 code points (caller ID is any text the caller chose) is cut, with '…'.
 */
export function formatNumber(raw: unknown, region?: string): string {
  const shown = displayText(raw, MAX_SHOWN + 1);
  if (Array.from(shown).length > MAX_SHOWN)
    return `${truncateCodePoints(shown, MAX_SHOWN - 1).trimEnd()}…`;
  const digits = digitsOf(shown);
  if (digits.length === 0 || (digits.length <= MAX_EXTENSION_DIGITS && !shown.startsWith('+')))
    return shown;
  const p = parse(shown, region);
  if (!p) return shown;
  return p.country && p.country === regionOf(region) ? p.formatNational() : p.formatInternational();
}
