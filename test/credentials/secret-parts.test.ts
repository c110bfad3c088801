/**
 * The keychain's size limit, through the CredentialStore port: a fake of Windows Credential
 * Manager as keytar meets it (CredWriteW refuses a blob over CRED_MAX_CREDENTIAL_BLOB_SIZE,
 * 5 * 512 bytes, and keytar says "The stub received bad data."), holding the UTF-8 bytes keytar
 * writes.
 */
import { describe, expect, it } from 'vitest';
import {
  KeytarCredentialStore,
  type KeytarApi,
} from '../../src-main/core/credentials/keytar-store.ts';

const CRED_MAX_CREDENTIAL_BLOB_SIZE = 5 * 512;

function windowsCredentialManager(): KeytarApi & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  const key = (service: string, account: string) => `${service}/${account}`;
  return {
    entries,
    async getPassword(service, account) {
      return entries.get(key(service, account)) ?? null;
    },
    async setPassword(service, account, password) {
      if (Buffer.byteLength(password, 'utf8') > CRED_MAX_CREDENTIAL_BLOB_SIZE)
        throw new Error('The stub received bad data.');
      entries.set(key(service, account), password);
    },
    async deletePassword(service, account) {
      return entries.delete(key(service, account));
    },
  };
}

function storeOn(keychain: KeytarApi): KeytarCredentialStore {
  return new KeytarCredentialStore({ load: async () => keychain, platform: 'win32' });
}

/** An organisation credential as a real identity provider's refresh token makes it: about 6 KB. */
function orgCredential(bytes: number): string {
  const refreshToken = 'eyJ' + 'A1b2C3d4-_'.repeat(Math.ceil(bytes / 10)).slice(0, bytes);
  return JSON.stringify({ kind: 'sign-in', issuer: 'https://login.example.com', refreshToken });
}

describe('a secret larger than one Windows Credential Manager entry', () => {
  it('a 6 KB organisation credential is stored and read back whole, no entry over 2,560 bytes', async () => {
    const keychain = windowsCredentialManager();
    const store = storeOn(keychain);
    const secret = orgCredential(6 * 1024);
    await store.setSecret('org@relay.example.com', secret);
    expect(await store.getSecret('org@relay.example.com')).toBe(secret);
    expect(keychain.entries.size).toBeGreaterThan(1);
    for (const value of keychain.entries.values())
      expect(Buffer.byteLength(value, 'utf8')).toBeLessThanOrEqual(CRED_MAX_CREDENTIAL_BLOB_SIZE);
    // Read by a new store (the next start), from the keychain alone.
    expect(await storeOn(keychain).getSecret('org@relay.example.com')).toBe(secret);
  });

  it('characters of several bytes are never cut in two', async () => {
    const keychain = windowsCredentialManager();
    const secret = 'é€😀x'.repeat(900);
    await storeOn(keychain).setSecret('a@b', secret);
    expect(await storeOn(keychain).getSecret('a@b')).toBe(secret);
  });

  it('a secret that fits stays one entry, as older versions wrote it', async () => {
    const keychain = windowsCredentialManager();
    keychain.entries.set('Screenpop/old@b', 'written-by-1.0');
    const store = storeOn(keychain);
    expect(await store.getSecret('old@b')).toBe('written-by-1.0');
    await store.setSecret('k@b', 's3cret');
    expect(keychain.entries.get('Screenpop/k@b')).toBe('s3cret');
  });

  it('a shorter secret replacing a parted one, and a delete, leave no part behind', async () => {
    const keychain = windowsCredentialManager();
    const store = storeOn(keychain);
    await store.setSecret('org@r', orgCredential(6000));
    await store.setSecret('org@r', orgCredential(3000));
    expect(await store.getSecret('org@r')).toBe(orgCredential(3000));
    const afterShorter = keychain.entries.size;
    await store.setSecret('org@r', 'small');
    expect([...keychain.entries.keys()]).toEqual(['Screenpop/org@r']);
    expect(afterShorter).toBeGreaterThan(1);
    await store.setSecret('org@r', orgCredential(6000));
    expect(await store.deleteSecret('org@r')).toBe(true);
    expect(keychain.entries.size).toBe(0);
  });

  it('a missing part reads as no secret (sign in again), never as a shortened one', async () => {
    const keychain = windowsCredentialManager();
    const store = storeOn(keychain);
    await store.setSecret('org@r', orgCredential(6000));
    const part = [...keychain.entries.keys()].find((k) => k !== 'Screenpop/org@r')!;
    keychain.entries.delete(part);
    expect(await store.getSecret('org@r')).toBeNull();
  });
});
