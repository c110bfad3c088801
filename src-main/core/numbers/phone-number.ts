/**
 * The one wrapper around libphonenumber-js: every place that reads a telephone number (matching a
 * call's `to` against the user's DIDs, the directory's keys and the card's formatting, the relay
 * filter's forms of a DID) parses it here, with the same region rule and the same "possible
 * number" test, so that no two of them can disagree on what a number is.
 */
import { parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js';

/** The default region as the parser takes it (ISO 3166 alpha-2, any case, spaces around), or none. */
export function regionOf(code: string | undefined): CountryCode | undefined {
  const c = (code ?? '').trim().toUpperCase();
  return /^[A-Z]{2}$/.test(c) ? (c as CountryCode) : undefined;
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
