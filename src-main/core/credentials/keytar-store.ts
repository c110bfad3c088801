/**
 * The product's CredentialStore: the OS keychain through keytar (macOS Keychain, Windows Credential
 * Manager, the Secret Service — gnome-keyring, KWallet — on Linux through libsecret).
 *
 * Entries: service `Screenpop` (KEYCHAIN_SERVICE), account `<apiKey>@<base address host>`
 * (keychainAccount()), password = the API secret.
 *
 * keytar is an optional dependency (a from-source install without libsecret's development files
 * must still install: the demo, the simulator, the relay and the runner with SCREENPOP_API_SECRET
 * need no keychain), loaded lazily where a secret is read or stored. Whatever keeps it from
 * working becomes a KeychainUnavailableError that names the cause (not installed, library missing,
 * no Secret Service, refused) with its remedy per OS; it never contains the secret. There is no
 * fallback to a file: without a keychain, no secret is kept.
 *
 * A secret longer than one Windows Credential Manager entry holds (2,560 bytes) is kept in parts
 * (secret-parts.ts), on every OS alike.
 */
import { KEYCHAIN_SERVICE, KeychainUnavailableError } from './credential-store.ts';
import type { CredentialStore, KeychainProblem } from './credential-store.ts';
import { PartedSecrets, WINDOWS_CREDENTIAL_MAX_BYTES } from './secret-parts.ts';

export { KeychainUnavailableError } from './credential-store.ts';

export interface KeytarApi {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

async function importKeytar(): Promise<KeytarApi> {
  const mod = (await import('keytar')) as KeytarApi & { default?: KeytarApi };
  return mod.default ?? mod;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

/** Why loading keytar failed: the package is absent, or its native part cannot load. */
export function loadProblem(err: unknown): KeychainProblem {
  const code = (err as { code?: unknown } | null)?.code;
  const text = firstLine(err);
  const absent =
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    /['"]keytar['"]|keytar/.test(text) &&
    !/\.node\b/.test(text);
  return absent ? 'not-installed' : 'library-missing';
}

/** Why a keychain call failed: no Secret Service to talk to, or the keychain said no. */
export function callProblem(err: unknown): KeychainProblem {
  const text = firstLine(err);
  return /org\.freedesktop\.secrets|autolaunch D-Bus|Could not connect|DBUS_SESSION_BUS_ADDRESS|Failed to connect to socket|not provided by any \.service files/i.test(
    text,
  )
    ? 'no-service'
    : 'refused';
}

export interface KeytarStoreOptions {
  /** Keychain service name; default 'Screenpop'. */
  service?: string;
  /** Loads keytar; tests may inject another implementation. */
  load?: () => Promise<KeytarApi>;
  /** The OS the remedies are written for (default: this one). */
  platform?: NodeJS.Platform;
  /** The most one keychain entry holds (default: Windows' 2,560 bytes, on every OS). */
  maxEntryBytes?: number;
}

export class KeytarCredentialStore implements CredentialStore {
  private readonly service: string;
  private readonly load: () => Promise<KeytarApi>;
  private readonly platform: NodeJS.Platform;
  private keytar: Promise<KeytarApi> | undefined;
  /** The secrets, each in one entry or in parts. */
  private readonly parted: PartedSecrets;

  constructor(options: KeytarStoreOptions = {}) {
    this.service = options.service ?? KEYCHAIN_SERVICE;
    this.load = options.load ?? importKeytar;
    this.platform = options.platform ?? process.platform;
    const entries: CredentialStore = {
      getSecret: (account) => this.run((k) => k.getPassword(this.service, account)),
      setSecret: (account, secret) => this.run((k) => k.setPassword(this.service, account, secret)),
      deleteSecret: (account) => this.run((k) => k.deletePassword(this.service, account)),
    };
    this.parted = new PartedSecrets(entries, options.maxEntryBytes ?? WINDOWS_CREDENTIAL_MAX_BYTES);
  }

  /**
   * Whether keytar can be loaded at all (no secret is touched): resolves, or rejects with the
   * KeychainUnavailableError saying why. For saying so before a secret is needed.
   */
  async check(): Promise<void> {
    await this.loaded();
  }

  async getSecret(account: string): Promise<string | null> {
    return this.parted.getSecret(account);
  }

  async setSecret(account: string, secret: string): Promise<void> {
    if (!secret) throw new Error('An empty secret cannot be stored.');
    await this.parted.setSecret(account, secret);
  }

  async deleteSecret(account: string): Promise<boolean> {
    return this.parted.deleteSecret(account);
  }

  private loaded(): Promise<KeytarApi> {
    // A failed load is retried on the next call (the user may install libsecret meanwhile).
    this.keytar ??= this.load().catch((err: unknown) => {
      this.keytar = undefined;
      throw new KeychainUnavailableError(loadProblem(err), firstLine(err), this.platform, err);
    });
    return this.keytar;
  }

  private async run<T>(op: (k: KeytarApi) => Promise<T>): Promise<T> {
    const k = await this.loaded();
    try {
      return await op(k);
    } catch (err) {
      // keytar's messages come from libsecret/D-Bus (e.g. "Cannot autolaunch D-Bus"); they carry
      // no secret, but say nothing to a user either: the words name the cause and the remedy.
      throw new KeychainUnavailableError(callProblem(err), firstLine(err), this.platform, err);
    }
  }
}
