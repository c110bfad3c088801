/**
 * Glue between the settings (which hold the API key and base address, not secret) and the keychain
 * (which holds the secret): the `credentials` callback the TokenManager takes. The one place that
 * turns "this key at this service" into credentials, for the tray app (keychain, or memory in demo
 * mode) and the headless runner (keychain, or the secret from its environment, held in memory).
 */
import type { Credentials } from '../api/token-manager.ts';
import type { CredentialStore } from './credential-store.ts';
import { keychainAccountOrNull } from './credential-store.ts';

export function credentialsSource(
  store: CredentialStore,
  current: () => { apiKey: string; baseUrl: string },
): () => Promise<Credentials | null> {
  return async () => {
    const { apiKey, baseUrl } = current();
    const account = keychainAccountOrNull(apiKey, baseUrl);
    const secret = account ? await store.getSecret(account) : null;
    return secret ? { key: apiKey.trim(), secret } : null;
  };
}
