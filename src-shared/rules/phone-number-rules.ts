/**
 * What a number is, without a parser: the rules the app, the relay and the Settings window share
 * (the relay and the windows load no libphonenumber-js). The app reads a telephone number through
 * src-main/core/numbers/phone-number.ts, which re-exports these and adds the parser; nothing else writes
 * these rules again. The words, one per idea:
 *
 * - digits: the ASCII digits of a text, nothing else (`digitsOf`).
 * - extension: 1 to 7 digits exactly as written, nothing else: the widest format of the Yeastar
 *   family (docs/wire-protocol.md section 6, "what an extension is"). What Settings and the
 *   runner's --extension accept, which `to` is the user's extension, which numbers the directory
 *   and the card keep as they are.
 * - short number: at most 7 digits and no `+` (spaces or dashes between them allowed): an extension
 *   or a short code, never read as a telephone number (not parsed, not formatted, not looked up
 *   in a CRM). A longer string of digits, or one starting with `+`, is a telephone number.
 * - DID: a telephone number that reaches the user directly (`isDid`); in full international form
 *   (`isInternationalDid`) where no region can be applied (organisation mode: the relay).
 * - region: the country of numbers written without a country code, ISO 3166 alpha-2 (`regionCode`).
 * - telephone number, E.164, national digits: the parser's words (src-main/core/numbers/phone-number.ts),
 *   where "dialable, normalised for the region" (call control, issue 38) belongs too.
 */
export const MAX_EXTENSION_DIGITS = 7;

const EXTENSION = new RegExp(`^[0-9]{1,${MAX_EXTENSION_DIGITS}}$`);

/** True for an extension number exactly as written (no spaces, no signs). */
export function isExtensionNumber(text: string): boolean {
  return EXTENSION.test(text);
}

/** The ASCII digits of `text`, in order. */
export function digitsOf(text: string): string {
  return text.replace(/[^0-9]/g, '');
}

/**
 * True for a short number (trimmed `text`): some digits, at most MAX_EXTENSION_DIGITS of them, and
 * no leading `+`. An extension or a short code: never a telephone number.
 */
export function isShortNumber(text: string): boolean {
  const t = text.trim();
  const digits = digitsOf(t).length;
  return digits > 0 && digits <= MAX_EXTENSION_DIGITS && !t.startsWith('+');
}

/**
 * A DID as a person may write it: an optional `+`, then digits and the separators people put
 * between them (space, `(`, `)`, `.`, `-`, `/`), at most MAX_DID_CHARS characters, MIN_DID_DIGITS
 * to MAX_DID_DIGITS digits. Why these bounds:
 * - 17 digits: E.164's 15, plus an international prefix `00` written in front ("00 44 20 ...").
 * - 3 digits: Settings' bound before (it keeps every DID a settings file holds today); whether
 *   it is a possible number is the parser's question where a region applies (the matcher logs a
 *   DID it cannot read).
 * - 40 characters: the relay's bound on every filter entry (relay-protocol.ts), room for
 *   17 digits with a separator between each two.
 * - `/` is a separator people write ("030/1234567"); letters, `*` and `#` are not numbers.
 */
export const MIN_DID_DIGITS = 3;
export const MAX_DID_DIGITS = 17;
export const MAX_DID_CHARS = 40;
const DID_TEXT = /^\+?[0-9 ()./-]+$/;

/** True for a DID as written (trimmed): see above. */
export function isDid(text: string): boolean {
  const t = text.trim();
  if (t.length > MAX_DID_CHARS || !DID_TEXT.test(t)) return false;
  const digits = digitsOf(t).length;
  return digits >= MIN_DID_DIGITS && digits <= MAX_DID_DIGITS;
}

/** E.164's most digits (country code and national number). */
export const MAX_E164_DIGITS = 15;
/** The fewest digits a DID in international form has here (country code and national number). */
export const MIN_INTERNATIONAL_DIGITS = 8;

/**
 * A DID in full international form, as organisation mode wants it (the relay knows no region and
 * matches it exactly): a DID that starts with `+`, then MIN_INTERNATIONAL_DIGITS to MAX_E164_DIGITS
 * digits.
 */
export function isInternationalDid(text: string): boolean {
  const t = text.trim();
  if (!t.startsWith('+') || !isDid(t)) return false;
  const digits = digitsOf(t).length;
  return digits >= MIN_INTERNATIONAL_DIGITS && digits <= MAX_E164_DIGITS;
}

/** A number's digits with a leading `+` or international prefix `00` taken off. */
export function internationalDigits(text: string): string {
  const d = digitsOf(text);
  return !text.trim().startsWith('+') && d.startsWith('00') ? d.slice(2) : d;
}

/**
 * The region as the parser takes it: ISO 3166 alpha-2, any case, spaces around, upper-cased; null
 * for anything else. Settings refuse what this refuses.
 */
export function regionCode(text: string | undefined): string | null {
  const c = (text ?? '').trim();
  // Tested before upper-casing: 'ß'.toUpperCase() is 'SS' (a region), and it is not two letters.
  return /^[A-Za-z]{2}$/.test(c) ? c.toUpperCase() : null;
}
