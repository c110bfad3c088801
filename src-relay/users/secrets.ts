import { createHash, randomBytes } from 'node:crypto';
import { DEVICE_CREDENTIAL_PREFIX } from '../../src-shared/relay-protocol.ts';

/**
 * The secrets of organisation mode, made and compared in one place: one-time enrolment codes
 * (typed by a person, so short and unambiguous) and device credentials (kept by a keychain, so
 * long). The relay stores only their SHA-256 (`secretHash`).
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

/** A short id for a device record (shown to administrators; not a secret). */
export function newDeviceId(): string {
  return randomBytes(4).toString('hex');
}
