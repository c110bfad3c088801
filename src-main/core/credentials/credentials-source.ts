/**
 * Glue between the settings (which hold the API key and base address, not secret) and the keychain
 * (which holds the secret): the `credentials` callback the TokenManager takes.
 */
import type { Credentials } from '../api/token-manager.ts';
import type { CredentialStore } from './credential-store.ts';
import { keychainAccount } from './credential-store.ts';

export function credentialsSource(
  store: CredentialStore,
  current: () => { apiKey: string; baseUrl: string },
): () => Promise<Credentials | null> {
  return async () => {
    const { apiKey, baseUrl } = current();
    const key = apiKey.trim();
    if (!key || !baseUrl) return null;
    const secret = await store.getSecret(keychainAccount(key, baseUrl));
    return secret ? { key, secret } : null;
  };
}
