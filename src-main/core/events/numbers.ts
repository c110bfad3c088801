/**
 * Does a call's `to` reach this user? Extensions are compared as exact digit strings ("101" is not
 * "0101"); anything else is read as a telephone number with libphonenumber-js, in the user's
 * default region, and compared in E.164 form against the user's DIDs, so "+1 (415) 555-0100",
 * "415-555-0100" and "14155550100" are one number for a US user.
 */
import { isExtensionNumber, regionCode, toE164 } from '../numbers/phone-number.ts';

export interface UserNumbers {
  extensions: string[];
  dids: string[];
  /** ISO 3166 alpha-2, e.g. "US": the country of numbers written without a country code. */
  defaultRegion: string;
}

export class UserNumberMatcher {
  private readonly extensions: Set<string>;
  private readonly dids: Set<string>;
  private readonly region: string;
  /** Settings entries that are neither digit extensions nor possible numbers (for the caller to log). */
  readonly rejected: string[] = [];

  constructor(user: UserNumbers) {
    this.region = regionCode(user.defaultRegion) ?? '';
    this.extensions = new Set();
    for (const ext of user.extensions) {
      const e = ext.trim();
      if (isExtensionNumber(e)) this.extensions.add(e);
      else this.rejected.push(ext);
    }
    this.dids = new Set();
    for (const did of user.dids) {
      const e164 = toE164(did, this.region);
      if (e164) this.dids.add(e164);
      else this.rejected.push(did);
    }
  }

  /** True when `value` is one of the user's own extensions (presence, voicemail box). */
  isExtension(value: string): boolean {
    return this.extensions.has(value.trim());
  }

  /** True when a ring to `to` is a ring for this user. */
  matches(to: string): boolean {
    const trimmed = to.trim();
    if (this.extensions.has(trimmed)) return true;
    if (this.dids.size === 0) return false;
    // Extensions of somebody else are not telephone numbers: skip the parser.
    if (isExtensionNumber(trimmed)) return false;
    const e164 = toE164(trimmed, this.region);
    return e164 !== undefined && this.dids.has(e164);
  }
}
