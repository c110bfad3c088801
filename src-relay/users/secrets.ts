import { createHash, createHmac, randomBytes } from 'node:crypto';
import { DEVICE_CREDENTIAL_PREFIX } from '../../src-shared/relay/relay-protocol.ts';

/**
 * The secrets of organisation mode, made and compared in one place: one-time enrolment codes
 * (typed by a person, so short and unambiguous) and device credentials (kept by a keychain, so
 * long). The relay stores a device credential (256 random bits) as its SHA-256 (`secretHash`), and
 * an enrolment code (60 bits, few enough to search offline at GPU speed) as HMAC-SHA-256 under a
 * key kept apart from the users (`codeHash`, code-key.ts).
 */

/** Crockford's base-32: no I, L, O or U, so a code read aloud or off paper is typed right. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 12;

/**
 * A new enrolment code, `XXXX-XXXX-XXXX`: 60 random bits. With each client address allowed a few
 * wrong codes a minute (auth.maxFailuresPerAddressPerMinute) and codes that expire within days,
 * guessing one is out of reach.
 */
export function newEnrolmentCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) {
    if (i > 0 && i % 4 === 0) code += '-';
    code += ALPHABET[bytes[i]! & 31];
  }
  return code;
}

/**
 * A code as typed, in the form it was issued: upper case, spaces and dashes dropped, and the
 * letters people confuse with digits read as those digits (O as 0, I and L as 1). Null when what
 * remains cannot be a code.
 */
export function normaliseEnrolmentCode(text: string): string | null {
  const plain = text.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (plain.length !== CODE_LENGTH) return null;
  for (const ch of plain) if (!ALPHABET.includes(ch)) return null;
  return `${plain.slice(0, 4)}-${plain.slice(4, 8)}-${plain.slice(8)}`;
}

/** A new device credential: the prefix and 256 random bits. */
export function newDeviceCredential(): string {
  return DEVICE_CREDENTIAL_PREFIX + randomBytes(32).toString('base64url');
}

/** The only form in which codes and credentials are stored or compared. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** How a code stored under the key is marked (a plain SHA-256 is 64 hex digits, nothing else). */
const KEYED = 'hmac:';

/**
 * The form in which a new enrolment code is stored: `hmac:<HMAC-SHA-256 under the code key>`; with
 * no key configured, the plain SHA-256 it had before the key existed.
 */
export function codeHash(code: string, key: string | null): string {
  return key === null
    ? secretHash(code)
    : KEYED + createHmac('sha256', key).update(code).digest('hex');
}

/**
 * Every form a code presented now may be stored in, to look up in this order: under the key, then
 * the plain SHA-256 of a code issued before the key was configured (valid until it expires: 72 h
 * by default, 30 days at most).
 */
export function codeHashes(code: string, key: string | null): string[] {
  return key === null ? [secretHash(code)] : [codeHash(code, key), secretHash(code)];
}

/** A short id for a device record (shown to administrators; not a secret). */
export function newDeviceId(): string {
  return randomBytes(4).toString('hex');
}
