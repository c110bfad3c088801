/**
 * A secret larger than one keychain entry holds, kept in several entries.
 *
 * Windows Credential Manager keeps at most CRED_MAX_CREDENTIAL_BLOB_SIZE (5 * 512 = 2,560) bytes
 * per credential; keytar writes the password's UTF-8 bytes, and a longer one fails with "The stub
 * received bad data". The organisation's credential (a JSON object holding the identity
 * provider's refresh token) passes that with real providers. So every keychain write goes through
 * here, on every OS (one behaviour, tested against the real Secret Service too):
 * - a secret that fits is one entry, exactly as before (entries written by older versions read
 *   back unchanged);
 * - a longer one is cut into parts of at most `maxBytes` bytes (never inside a character), kept
 *   under `<account>#part<i>` (1-based), and the account's own entry says how many parts there
 *   are and how long the whole is: `PARTS_MARK` + `<count>:<length>`. A secret that itself begins
 *   with the mark is always cut, so a read is never ambiguous;
 * - the parts are written before the entry that names them, and parts left over from a longer
 *   earlier secret are deleted after it, so a reader never follows a name to a missing part; a
 *   part that is missing or a whole of the wrong length reads as no secret (sign in again), never
 *   as a wrong one.
 */
import type { CredentialStore } from './credential-store.ts';

/** Windows' CRED_MAX_CREDENTIAL_BLOB_SIZE: the most one Credential Manager entry holds. */
export const WINDOWS_CREDENTIAL_MAX_BYTES = 5 * 512;

/** What the account's entry begins with when the secret is in parts (not text a secret begins with). */
export const PARTS_MARK = 'screenpop-parts:v1:';

/** More parts than this (over 160 KB) is not a secret of ours: refused on write, ignored on read. */
export const MAX_PARTS = 64;

export function partAccount(account: string, index: number): string {
  return `${account}#part${index}`;
}

/** Cuts `text` into pieces of at most `maxBytes` UTF-8 bytes, between characters. */
export function cutUtf8(text: string, maxBytes: number): string[] {
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > maxBytes && piece) {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += ch;
    bytes += size;
  }
  if (piece) pieces.push(piece);
  return pieces;
}

/** The parts named by an account's entry, or null when the entry is a whole secret. */
function partsNamed(entry: string): { count: number; length: number } | 'unreadable' | null {
  if (!entry.startsWith(PARTS_MARK)) return null;
  const m = /^(\d{1,3}):(\d{1,7})$/.exec(entry.slice(PARTS_MARK.length));
  if (!m) return 'unreadable';
  const count = Number(m[1]);
  const length = Number(m[2]);
  return count >= 1 && count <= MAX_PARTS ? { count, length } : 'unreadable';
}

/** A CredentialStore over another whose entries hold at most `maxBytes` bytes each. */
export class PartedSecrets implements CredentialStore {
  private readonly entries: CredentialStore;
  private readonly maxBytes: number;

  constructor(entries: CredentialStore, maxBytes: number = WINDOWS_CREDENTIAL_MAX_BYTES) {
    this.entries = entries;
    this.maxBytes = maxBytes;
  }

  async getSecret(account: string): Promise<string | null> {
    const entry = await this.entries.getSecret(account);
    if (entry === null) return null;
    const named = partsNamed(entry);
    if (named === null) return entry;
    if (named === 'unreadable') return null;
    const parts: string[] = [];
    for (let i = 1; i <= named.count; i++) {
      const part = await this.entries.getSecret(partAccount(account, i));
      if (part === null) return null;
      parts.push(part);
    }
    const whole = parts.join('');
    return whole.length === named.length ? whole : null;
  }

  async setSecret(account: string, secret: string): Promise<void> {
    if (!secret) throw new Error('An empty secret cannot be stored.');
    const before = await this.partCount(account);
    let count = 0;
    if (Buffer.byteLength(secret, 'utf8') <= this.maxBytes && !secret.startsWith(PARTS_MARK)) {
      await this.entries.setSecret(account, secret);
    } else {
      const parts = cutUtf8(secret, this.maxBytes);
      if (parts.length > MAX_PARTS)
        throw new Error(`The secret is too long for the keychain (${parts.length} parts).`);
      for (const [i, part] of parts.entries())
        await this.entries.setSecret(partAccount(account, i + 1), part);
      await this.entries.setSecret(account, `${PARTS_MARK}${parts.length}:${secret.length}`);
      count = parts.length;
    }
    for (let i = count + 1; i <= before; i++)
      await this.entries.deleteSecret(partAccount(account, i));
  }

  async deleteSecret(account: string): Promise<boolean> {
    const count = await this.partCount(account);
    const deleted = await this.entries.deleteSecret(account);
    for (let i = 1; i <= count; i++) await this.entries.deleteSecret(partAccount(account, i));
    return deleted;
  }

  /** How many parts the account's entry names now (0 for a whole secret or none). */
  private async partCount(account: string): Promise<number> {
    const entry = await this.entries.getSecret(account);
    const named = entry === null ? null : partsNamed(entry);
    return named && named !== 'unreadable' ? named.count : 0;
  }
}
