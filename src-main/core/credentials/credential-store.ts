/**
 * Where the API secret lives: the OS keychain (keytar-store.ts) in the product, memory in tests.
 * Never a settings file, a log or an error message.
 *
 * Accounts are named by `keychainAccount()` so that one keychain can hold secrets for several
 * tenants or keys side by side.
 */
export interface CredentialStore {
  getSecret(account: string): Promise<string | null>;
  setSecret(account: string, secret: string): Promise<void>;
  /** True when something was deleted. */
  deleteSecret(account: string): Promise<boolean>;
}

/** The keychain's service name: the entry shows up as "Screenpop" in Keychain Access / Seahorse. */
export const KEYCHAIN_SERVICE = 'Screenpop';

/**
 * The keychain account for an API key at a tenant: `<apiKey>@<host[:port]>` of the base address,
 * e.g. `k3y@acme.example.com`. The same key at two tenants, or a demo simulator on localhost, never
 * share an entry.
 */
export function keychainAccount(apiKey: string, baseUrl: string): string {
  const key = apiKey.trim();
  if (!key) throw new Error('An API key is needed to name its keychain entry.');
  return `${key}@${new URL(baseUrl).host}`;
}

/** keychainAccount(), or null while the key or the base address is missing or unusable. */
export function keychainAccountOrNull(apiKey: string, baseUrl: string): string | null {
  try {
    return apiKey.trim() && baseUrl ? keychainAccount(apiKey, baseUrl) : null;
  } catch {
    return null;
  }
}

/** For tests and the demo mode: a keychain that forgets everything when the process ends. */
export class MemoryCredentialStore implements CredentialStore {
  private readonly entries = new Map<string, string>();

  async getSecret(account: string): Promise<string | null> {
    return this.entries.get(account) ?? null;
  }

  async setSecret(account: string, secret: string): Promise<void> {
    if (!secret) throw new Error('An empty secret cannot be stored.');
    this.entries.set(account, secret);
  }

  async deleteSecret(account: string): Promise<boolean> {
    return this.entries.delete(account);
  }
}
