/**
 * Numbers in the app, one module and one vocabulary (src-shared/rules/phone-number-rules.ts names the
 * words: digits, extension, short number, DID, region). The parser-free rules are re-exported from
 * there; here is the one wrapper around libphonenumber-js: every place that reads a telephone
 * number (matching a call's `to` against the user's DIDs, the directory's keys and the card's
 * formatting, the relay filter's forms of a DID, the CRM's query) parses it here, with the same
 * region rule, the same "possible number" test and the same short-number rule, so that no two of
 * them can disagree on what a number is.
 *
 * The parser's words: a telephone number is a possible number once read in the region (`parsePhone`);
 * its E.164 form is `+` and country code and national number (`toE164`); its national digits are
 * the national number's digits without a trunk prefix (`telephoneForms`).
 */
import { parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js';
import { displayText, truncateCodePoints } from '../../../src-shared/ui/text.ts';
import {
  digitsOf,
  isDid,
  isShortNumber,
  MAX_DID_CHARS,
  regionCode,
} from '../../../src-shared/rules/phone-number-rules.ts';

export {
  digitsOf,
  internationalDigits,
  isDid,
  isExtensionNumber,
  isInternationalDid,
  isShortNumber,
  MAX_EXTENSION_DIGITS,
  regionCode,
} from '../../../src-shared/rules/phone-number-rules.ts';

/** The default region as the parser takes it (src-shared's regionCode), or none. */
export function regionOf(code: string | undefined): CountryCode | undefined {
  return (regionCode(code) as CountryCode | null) ?? undefined;
}

/** `text` as a possible telephone number, read in `region` when it has no country code. */
export function parsePhone(text: string, region?: string): PhoneNumber | undefined {
  try {
    const parsed = parsePhoneNumberFromString(text, regionOf(region));
    return parsed && parsed.isPossible() ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** E.164 form of `text` in `region`, or undefined when it is not a possible telephone number. */
export function toE164(text: string, region?: string): string | undefined {
  return parsePhone(text, region)?.number;
}

/** The longest text read as a number; caller ID is any text the caller chose. */
const MAX_NUMBER_TEXT = 64;

/**
 * The forms of a telephone number (E.164, and the national digits), or null for a short number
 * (an extension or a short code) and for what is not a possible telephone number in `region`.
 */
export function telephoneForms(
  raw: string,
  region?: string,
): { e164: string; national: string } | null {
  const text = raw.trim().slice(0, MAX_NUMBER_TEXT);
  if (isShortNumber(text)) return null;
  const parsed = parsePhone(text, region);
  return parsed ? { e164: parsed.number, national: String(parsed.nationalNumber) } : null;
}

/**
 * The forms a call's `to` may take for this DID when compared on digits alone (the relay knows no
 * region): its digits as written (with its `+`), and where it parses, E.164, E.164 without `+` and
 * the national digits.
 */
export function didForms(did: string, region?: string): string[] {
  const forms = new Set<string>();
  const written = did.trim();
  const digits = digitsOf(written);
  if (digits) forms.add(written.startsWith('+') ? `+${digits}` : digits);
  const parsed = parsePhone(did, region);
  if (parsed) {
    forms.add(parsed.number);
    forms.add(parsed.number.slice(1));
    forms.add(String(parsed.nationalNumber));
  }
  return [...forms];
}

/**
 * A matching key for `raw` (the directory's): E.164 for a possible telephone number, `ext:<digits>`
 * for a short number, null for text with no digits. Keys are equal exactly when the numbers are
 * the same: "(415) 555-0123" in a contacts file matches "+14155550123" from the service.
 */
export function numberKey(raw: unknown, region?: string): string | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim().slice(0, MAX_NUMBER_TEXT);
  const digits = digitsOf(text);
  if (digits.length === 0) return null;
  if (isShortNumber(text)) return `ext:${digits}`;
  const e164 = toE164(text, region);
  if (e164) return e164;
  return text.startsWith('+') ? `+${digits}` : `raw:${digits}`;
}

/** Longest caller number shown; longer caller text is cut and ends with an ellipsis. */
const MAX_SHOWN = 64;

/**
 * `raw` formatted for reading: a short number as it is, a telephone number in national format
 * inside the default region and international outside. Text longer than 64 code points (caller ID
 * is any text the caller chose) is cut, with '…'.
 */
export function formatNumber(raw: unknown, region?: string): string {
  const shown = displayText(raw, MAX_SHOWN + 1);
  if (Array.from(shown).length > MAX_SHOWN)
    return `${truncateCodePoints(shown, MAX_SHOWN - 1).trimEnd()}…`;
  if (digitsOf(shown).length === 0 || isShortNumber(shown)) return shown;
  const p = parsePhone(shown, region);
  if (!p) return shown;
  return p.country && p.country === regionOf(region) ? p.formatNational() : p.formatInternational();
}

/** What a number to call is written with: digits and the separators people put between them. */
const DIALABLE_TEXT = /^\+?[0-9 ()./-]+$/;

/**
 * `raw` as a number Screenpop may dial (call control, issue 38), or null when it is not one: the
 * text to send to the phone system (`dial`) and the number as the user reads it (`shown`).
 * - A short number (an extension, a short code): its digits.
 * - A telephone number: with `+` or `00` in front, its E.164 form; otherwise its digits as
 *   written, which is how the user's own phone would dial it (the PBX's outbound routes match
 *   those); it must be a possible number in `region` (any DID-shaped number where no region is set).
 * - Anything else is refused: letters, `*`, `#`, `;` parameters, non-ASCII digits, more than
 *   MAX_DID_DIGITS digits or MAX_DID_CHARS characters. The user is shown what will be dialled.
 */
export function dialableNumber(
  raw: unknown,
  region?: string,
): { dial: string; shown: string } | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_DID_CHARS || !DIALABLE_TEXT.test(text)) return null;
  const digits = digitsOf(text);
  if (isShortNumber(text)) return { dial: digits, shown: digits };
  if (!isDid(text)) return null;
  const international = text.startsWith('+') || digits.startsWith('00');
  if (regionOf(region) === undefined && !international) return { dial: digits, shown: text };
  const parsed = parsePhone(
    international && !text.startsWith('+') ? `+${digits.slice(2)}` : text,
    region,
  );
  if (!parsed) return null;
  return {
    dial: international ? parsed.number : digits,
    shown: formatNumber(parsed.number, region),
  };
}
