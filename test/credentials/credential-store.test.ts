import { describe, expect, it } from 'vitest';
import {
  keychainAccount,
  KEYCHAIN_SERVICE,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { credentialsSource } from '../../src-main/core/credentials/credentials-source.ts';

describe('keychainAccount', () => {
  it('is <apiKey>@<host[:port]> of the base address', () => {
    expect(KEYCHAIN_SERVICE).toBe('Screenpop');
    expect(keychainAccount('k3y', 'https://acme.example.com/')).toBe('k3y@acme.example.com');
    expect(keychainAccount(' k3y ', 'http://127.0.0.1:8080')).toBe('k3y@127.0.0.1:8080');
    expect(keychainAccount('k3y', 'https://ACME.example.com:443/x')).toBe('k3y@acme.example.com');
    expect(() => keychainAccount('', 'https://acme.example.com')).toThrow(/API key/);
  });
});

describe('MemoryCredentialStore', () => {
  it('sets, gets, overwrites and deletes per account', async () => {
    const store = new MemoryCredentialStore();
    expect(await store.getSecret('a')).toBeNull();
    await store.setSecret('a', 'one');
    await store.setSecret('b', 'two');
    await store.setSecret('a', 'three');
    expect(await store.getSecret('a')).toBe('three');
    expect(await store.getSecret('b')).toBe('two');
    expect(await store.deleteSecret('a')).toBe(true);
    expect(await store.deleteSecret('a')).toBe(false);
    expect(await store.getSecret('a')).toBeNull();
    await expect(store.setSecret('a', '')).rejects.toThrow(/empty/);
  });
});

describe('credentialsSource', () => {
  it('reads the secret for the current key and base address, or null when anything is missing', async () => {
    const store = new MemoryCredentialStore();
    let settings = { apiKey: 'k3y', baseUrl: 'https://acme.example.com' };
    const source = credentialsSource(store, () => settings);
    expect(await source()).toBeNull();
    await store.setSecret('k3y@acme.example.com', 's3cret');
    expect(await source()).toEqual({ key: 'k3y', secret: 's3cret' });
    settings = { apiKey: 'k3y', baseUrl: 'https://other.example.com' };
    expect(await source()).toBeNull();
    settings = { apiKey: '', baseUrl: 'https://acme.example.com' };
    expect(await source()).toBeNull();
    settings = { apiKey: 'k3y', baseUrl: '' };
    expect(await source()).toBeNull();
  });
});
