/**
 * The relay's users (organisation mode, docs/relay-protocol.md section 2.2): who may connect to a
 * tenant's stream and which extensions and numbers are theirs. One interface, two backends:
 * file-user-store.ts (a JSON file written atomically under a lock, beside the memory event store)
 * and redis-user-store.ts (beside the Redis event store, shared by every instance).
 *
 * Secrets are never kept: a device credential is stored as its SHA-256, an enrolment code as its
 * HMAC-SHA-256 under a key kept apart (code-key.ts; its plain SHA-256 without one), so a copy of
 * the file or of Redis admits nobody.
 */
export interface UserRecord {
  tenant: string;
  /** The administrator's name for the user (`relay users add <name>`). */
  name: string;
  extensions: string[];
  dids: string[];
  /** The user's e-mail address: an OpenID Connect sign-in with this address is this user. */
  email: string | null;
  createdAt: number;
  /** Set by `relay users revoke`: every device and sign-in of the user is refused from then on. */
  revokedAt: number | null;
}

export interface DeviceRecord {
  tenant: string;
  user: string;
  /** A short id to tell devices apart in `relay users list` (not secret). */
  id: string;
  /** What the device called itself when it enrolled (untrusted, shown only to administrators). */
  label: string;
  enrolledAt: number;
}

export interface NewUser {
  tenant: string;
  name: string;
  extensions: string[];
  dids: string[];
  email: string | null;
}

export type RedeemResult =
  | { ok: true; user: UserRecord; device: DeviceRecord }
  | { ok: false; reason: 'unknown' | 'expired' | 'revoked' };

/** A change made by anyone (this process, the `relay users` command, another instance). */
export interface UserChange {
  tenant: string;
  user: string;
}

export interface UserStore {
  readonly kind: 'file' | 'redis';
  open(): Promise<void>;
  close(): Promise<void>;
  /**
   * Adds a user, or gives a revoked one a fresh start (no devices) with the new details. Throws
   * `UserExistsError` for a user who exists and is not revoked.
   */
  addUser(user: NewUser, now: number): Promise<UserRecord>;
  /** A one-time code for one more device of the user, valid for `ttlMs`; only its hash is kept. */
  issueCode(tenant: string, name: string, code: string, ttlMs: number, now: number): Promise<void>;
  /** Spends a code (once, whoever asks first) and records the device with its credential's hash. */
  redeem(
    tenant: string,
    codeHash: string,
    credentialHash: string,
    label: string,
    now: number,
  ): Promise<RedeemResult>;
  /** Ends every device and sign-in of the user at once; false when there is no such user. */
  revoke(tenant: string, name: string, now: number): Promise<boolean>;
  /**
   * Ends every sign-in with an e-mail address, however it is mapped (a relay user with that
   * `--email`, the config's `oidc.users`, the phone system's extension list): revokes each user
   * with that address, or the user named by it, or else records the address as a revoked user of
   * its own (no extensions), which single sign-on looks up before any mapping. Returns the names
   * revoked.
   */
  revokeAddress(tenant: string, email: string, now: number): Promise<string[]>;
  /** Every user of the tenant (or of all tenants), with their devices. */
  list(tenant?: string): Promise<{ user: UserRecord; devices: DeviceRecord[] }[]>;
  findUser(tenant: string, name: string): Promise<UserRecord | null>;
  findByEmail(tenant: string, email: string): Promise<UserRecord | null>;
  /** The device a credential hash belongs to, and its user; null when unknown (or revoked). */
  findDevice(
    tenant: string,
    credentialHash: string,
  ): Promise<{ user: UserRecord; device: DeviceRecord } | null>;
  /** Called after any change, by anyone; the relay re-checks that user's open sessions. */
  onChange(listener: (change: UserChange) => void): () => void;
}

export class UserExistsError extends Error {
  constructor(name: string) {
    super(
      `user ${name} exists; "relay users code ${name}" issues a code for another device, "relay users revoke ${name}" ends their access`,
    );
  }
}

/** Two active users of a tenant with addresses that compare equal (canonicalEmail): a sign-in would be either. */
export class EmailTakenError extends Error {
  constructor(email: string, other: string) {
    super(
      `the e-mail address ${email} is already user ${other}'s (addresses are compared without the case of A-Z or the domain's form): a sign-in with it must be one user; "relay users revoke ${other}" first, or leave --email out`,
    );
  }
}

export class NoSuchUserError extends Error {
  constructor(name: string) {
    super(`no user ${name} (relay users list shows them)`);
  }
}

/** Names are what administrators type and logs show: a conservative alphabet. */
export const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9@._+-]{0,127}$/;
