/**
 * Where the API secret lives: the OS keychain (keytar-store.ts) in the product, memory in tests.
 * Never a settings file, a log or an error message.
 *
 * Accounts are named by `keychainAccount()` so that one keychain can hold secrets for several
 * tenants or keys side by side.
 */
import { english, type Words } from '../../../src-shared/i18n/phrase.ts';
import { faultWords, type FaultId } from '../../../src-shared/api/service-errors.ts';

export interface CredentialStore {
  getSecret(account: string): Promise<string | null>;
  setSecret(account: string, secret: string): Promise<void>;
  /** True when something was deleted. */
  deleteSecret(account: string): Promise<boolean>;
}

/**
 * Why the keychain cannot be used, each with its own words and remedy per OS (the catalogue's
 * status.fault.keychain-*): the keytar module is not installed (a from-source install without
 * libsecret's development files: it is an optional dependency), its native library cannot be
 * loaded (libsecret missing at run time), no Secret Service answers (no D-Bus session, no GNOME
 * Keyring or KWallet), or the keychain refused (locked, a prompt dismissed).
 */
export type KeychainProblem = 'not-installed' | 'library-missing' | 'no-service' | 'refused';

/** The OS a remedy is written for ({os} in the catalogue's select). */
export function remedyOs(platform: NodeJS.Platform): 'linux' | 'darwin' | 'win32' | 'other' {
  return platform === 'linux' || platform === 'darwin' || platform === 'win32' ? platform : 'other';
}

/** The keychain cannot be used: its fault (words and remedy) and, for support, the library's own message. */
export class KeychainUnavailableError extends Error {
  readonly problem: KeychainProblem;
  readonly fault: FaultId;
  readonly values: { os: string };
  /** The library's own first line (English, never the secret): for the log. */
  readonly detail: string;

  constructor(
    problem: KeychainProblem,
    detail: string,
    platform: NodeJS.Platform,
    cause?: unknown,
  ) {
    const fault: FaultId = `keychain-${problem}`;
    const values = { os: remedyOs(platform) };
    const words = faultWords(fault, values);
    super(
      `${english([...words.reason, ...words.remedy])} (${detail})`,
      cause === undefined ? undefined : { cause },
    );
    this.name = 'KeychainUnavailableError';
    this.problem = problem;
    this.fault = fault;
    this.values = values;
    this.detail = detail;
  }

  /** The reason and the remedy, as phrases (said in the user's language by the edge). */
  get said(): { reason: Words; remedy: Words } {
    return faultWords(this.fault, this.values);
  }

  /** The reason, then the remedy, as one text's phrases. */
  get words(): Words {
    const { reason, remedy } = this.said;
    return [...reason, ...remedy];
  }
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
