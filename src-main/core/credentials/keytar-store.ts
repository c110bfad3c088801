/**
 * The product's CredentialStore: the OS keychain through keytar (macOS Keychain, Windows Credential
 * Manager, the Secret Service — gnome-keyring, KWallet — on Linux through libsecret).
 *
 * Entries: service `Screenpop` (KEYCHAIN_SERVICE), account `<apiKey>@<base address host>`
 * (keychainAccount()), password = the API secret.
 *
 * keytar is a native module that needs libsecret on Linux. It is loaded lazily, on first use, so that
 * a machine without it gets a clear, catchable error from the store instead of a crash when the app
 * starts. Its errors are rewrapped in words a user can act on; they never contain the secret.
 */
import { KEYCHAIN_SERVICE } from './credential-store.ts';
import type { CredentialStore } from './credential-store.ts';

export interface KeytarApi {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

export class KeychainUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'KeychainUnavailableError';
  }
}

const LINUX_HINT =
  'On Linux, install libsecret (e.g. apt-get install libsecret-1-0) and run a Secret Service ' +
  'such as gnome-keyring or KWallet, unlocked in your desktop session.';

async function importKeytar(): Promise<KeytarApi> {
  const mod = (await import('keytar')) as KeytarApi & { default?: KeytarApi };
  return mod.default ?? mod;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message.split('\n')[0]! : String(err);
}

export interface KeytarStoreOptions {
  /** Keychain service name; default 'Screenpop'. */
  service?: string;
  /** Loads keytar; tests may inject another implementation. */
  load?: () => Promise<KeytarApi>;
}

export class KeytarCredentialStore implements CredentialStore {
  private readonly service: string;
  private readonly load: () => Promise<KeytarApi>;
  private keytar: Promise<KeytarApi> | undefined;

  constructor(options: KeytarStoreOptions = {}) {
    this.service = options.service ?? KEYCHAIN_SERVICE;
    this.load = options.load ?? importKeytar;
  }

  async getSecret(account: string): Promise<string | null> {
    return this.run('read the API secret from', (k) => k.getPassword(this.service, account));
  }

  async setSecret(account: string, secret: string): Promise<void> {
    if (!secret) throw new Error('An empty secret cannot be stored.');
    await this.run('store the API secret in', (k) => k.setPassword(this.service, account, secret));
  }

  async deleteSecret(account: string): Promise<boolean> {
    return this.run('delete the API secret from', (k) => k.deletePassword(this.service, account));
  }

  private async run<T>(what: string, op: (k: KeytarApi) => Promise<T>): Promise<T> {
    // A failed load is retried on the next call (the user may install libsecret meanwhile).
    this.keytar ??= this.load().catch((err: unknown) => {
      this.keytar = undefined;
      throw new KeychainUnavailableError(
        `The system keychain cannot be used: keytar could not be loaded (${describe(err)}). ${process.platform === 'linux' ? LINUX_HINT : ''}`.trim(),
        err,
      );
    });
    const k = await this.keytar;
    try {
      return await op(k);
    } catch (err) {
      // keytar's messages come from libsecret/D-Bus (e.g. "Cannot autolaunch D-Bus"); they carry
      // no secret, but say nothing to a user either.
      throw new KeychainUnavailableError(
        `Screenpop could not ${what} the system keychain (${describe(err)}). ${process.platform === 'linux' ? LINUX_HINT : 'Check that the keychain is unlocked.'}`,
        err,
      );
    }
  }
}
