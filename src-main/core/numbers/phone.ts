import { parsePhone, regionOf, toE164 } from './phone-number.ts';
import { displayText, truncateCodePoints } from '../../../src-shared/ui/text.ts';
import { MAX_EXTENSION_DIGITS } from '../../../src-shared/rules/extension-number.ts';

/**
 * Numbers as the directory matches and the popup shows them. Telephone numbers are normalized to
 * E.164 with libphonenumber-js and the user's default region, so "(415) 555-0123" in a contacts
 * file matches "+14155550123" from the service. Short numbers (extensions) are not telephone numbers
 * and are matched on their digits.
 */

function digitsOf(text: string): string {
  return text.replace(/[^0-9]/g, '');
}

/**
 * A matching key for `raw`: E.164 for a possible telephone number, `ext:<digits>` for a short
 * number, null for text with no digits. Keys are equal exactly when the numbers are the same.
 */
export function numberKey(raw: unknown, region?: string): string | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim().slice(0, 64);
  const digits = digitsOf(text);
  if (digits.length === 0) return null;
  if (digits.length <= MAX_EXTENSION_DIGITS && !text.startsWith('+')) return `ext:${digits}`;
  const e164 = toE164(text, region);
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
  const p = parsePhone(shown, region);
  if (!p) return shown;
  return p.country && p.country === regionOf(region) ? p.formatNational() : p.formatInternational();
}
