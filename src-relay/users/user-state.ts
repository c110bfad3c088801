import type { DeviceRecord, NewUser, RedeemResult, UserChange, UserRecord } from './types.ts';
import { EmailTakenError, UserExistsError, NoSuchUserError } from './types.ts';
import { newDeviceId } from './secrets.ts';
import {
  canonicalEmail,
  emailKey,
  sameAddressPairs,
} from '../../src-shared/rules/email-address.ts';

/** A pending enrolment code, by its hash. */
export interface CodeRecord {
  tenant: string;
  user: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * Users, codes and devices in memory, with the rules both the file store and tests rely on: the
 * file store loads one of these, changes it under its lock and writes it back. (The Redis store
 * applies the same rules in its scripts.)
 */
export class UserState {
  readonly users = new Map<string, UserRecord>();
  readonly codes = new Map<string, CodeRecord>();
  readonly devices = new Map<string, DeviceRecord & { credentialHash: string }>();

  /**
   * The record that remembers an address revoked before anyone signed in with it (named by its
   * emailKey()), so a later sign-in with it is refused: one shape for this store and Redis's.
   */
  static revokedAddress(tenant: string, want: string, now: number): UserRecord {
    return {
      tenant,
      name: want,
      extensions: [],
      dids: [],
      email: want,
      createdAt: now,
      revokedAt: now,
    };
  }

  static key(tenant: string, name: string): string {
    return `${tenant}\u0000${name}`;
  }

  user(tenant: string, name: string): UserRecord | null {
    return this.users.get(UserState.key(tenant, name)) ?? null;
  }

  addUser(u: NewUser, now: number): UserRecord {
    const old = this.user(u.tenant, u.name);
    if (old && old.revokedAt === null) throw new UserExistsError(u.name);
    const holder = u.email === null ? null : this.byEmail(u.tenant, u.email);
    if (holder && holder.revokedAt === null && holder.name !== u.name)
      throw new EmailTakenError(u.email!, holder.name);
    const record: UserRecord = { ...u, createdAt: now, revokedAt: null };
    this.users.set(UserState.key(u.tenant, u.name), record);
    return record;
  }

  issueCode(tenant: string, name: string, hash: string, ttlMs: number, now: number): void {
    const user = this.user(tenant, name);
    if (!user || user.revokedAt !== null) throw new NoSuchUserError(name);
    this.codes.set(hash, { tenant, user: name, createdAt: now, expiresAt: now + ttlMs });
  }

  redeem(
    tenant: string,
    codeHash: string,
    credentialHash: string,
    label: string,
    now: number,
  ): RedeemResult {
    const code = this.codes.get(codeHash);
    if (!code || code.tenant !== tenant) return { ok: false, reason: 'unknown' };
    this.codes.delete(codeHash);
    if (code.expiresAt <= now) return { ok: false, reason: 'expired' };
    const user = this.user(tenant, code.user);
    // A code issued before the user was revoked (and perhaps added again since) is void.
    if (!user || user.revokedAt !== null || code.createdAt < user.createdAt)
      return { ok: false, reason: 'revoked' };
    const device = { tenant, user: user.name, id: newDeviceId(), label, enrolledAt: now };
    this.devices.set(credentialHash, { ...device, credentialHash });
    return { ok: true, user, device };
  }

  revoke(tenant: string, name: string, now: number): boolean {
    const user = this.user(tenant, name);
    if (!user) return false;
    user.revokedAt ??= now;
    for (const [hash, d] of this.devices)
      if (d.tenant === tenant && d.user === name) this.devices.delete(hash);
    for (const [hash, c] of this.codes)
      if (c.tenant === tenant && c.user === name) this.codes.delete(hash);
    return true;
  }

  revokeAddress(tenant: string, email: string, now: number): string[] {
    const want = emailKey(email);
    const names = [...this.users.values()]
      .filter((u) => u.tenant === tenant && u.email !== null && canonicalEmail(u.email) === want)
      .map((u) => u.name);
    if (names.length === 0 && this.user(tenant, want)) names.push(want);
    if (names.length === 0) {
      this.users.set(UserState.key(tenant, want), UserState.revokedAddress(tenant, want, now));
      return [want];
    }
    for (const name of names) this.revoke(tenant, name, now);
    return names;
  }

  /** Drops codes past their expiry (kept until then so a late redemption is told "expired"). */
  prune(now: number): void {
    for (const [hash, c] of this.codes)
      if (c.expiresAt + 24 * 3600_000 <= now) this.codes.delete(hash);
  }

  list(tenant?: string): { user: UserRecord; devices: DeviceRecord[] }[] {
    const out: { user: UserRecord; devices: DeviceRecord[] }[] = [];
    for (const user of this.users.values()) {
      if (tenant !== undefined && user.tenant !== tenant) continue;
      const devices: DeviceRecord[] = [];
      for (const d of this.devices.values())
        if (d.tenant === user.tenant && d.user === user.name) devices.push(withoutHash(d));
      out.push({ user: { ...user }, devices });
    }
    return out.sort((a, b) =>
      a.user.tenant === b.user.tenant
        ? a.user.name.localeCompare(b.user.name)
        : a.user.tenant.localeCompare(b.user.tenant),
    );
  }

  /** The user with this address: an active one before a revoked one (added again since). */
  byEmail(tenant: string, email: string): UserRecord | null {
    const want = canonicalEmail(email);
    if (want === null) return null;
    let revoked: UserRecord | null = null;
    for (const user of this.users.values())
      if (user.tenant === tenant && user.email !== null && canonicalEmail(user.email) === want) {
        if (user.revokedAt === null) return user;
        revoked ??= user;
      }
    return revoked;
  }

  device(tenant: string, hash: string): { user: UserRecord; device: DeviceRecord } | null {
    const d = this.devices.get(hash);
    if (!d || d.tenant !== tenant) return null;
    const user = this.user(tenant, d.user);
    if (!user || user.revokedAt !== null) return null;
    return { user, device: withoutHash(d) };
  }

  toJSON(): unknown {
    return {
      v: 1,
      users: [...this.users.values()],
      codes: [...this.codes].map(([hash, c]) => ({ hash, ...c })),
      devices: [...this.devices.values()],
    };
  }

  /** Reads the file's JSON; throws with what is wrong (never quoting a value). */
  static fromJSON(value: unknown): UserState {
    const state = new UserState();
    if (!isObject(value) || value.v !== 1) throw new Error('not a users file (version 1)');
    const arr = (x: unknown, what: string): Record<string, unknown>[] => {
      if (!Array.isArray(x) || !x.every(isObject)) throw new Error(`${what} is not a list`);
      return x;
    };
    const str = (x: unknown, what: string): string => {
      if (typeof x !== 'string') throw new Error(`${what} is not text`);
      return x;
    };
    const num = (x: unknown, what: string): number => {
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error(`${what} is not a number`);
      return x;
    };
    const strs = (x: unknown, what: string): string[] => {
      if (!Array.isArray(x) || !x.every((s) => typeof s === 'string'))
        throw new Error(`${what} is not a list of text`);
      return x as string[];
    };
    for (const u of arr(value.users, 'users')) {
      const record: UserRecord = {
        tenant: str(u.tenant, 'a user tenant'),
        name: str(u.name, 'a user name'),
        extensions: strs(u.extensions, 'a user extensions'),
        dids: strs(u.dids, 'a user dids'),
        email: u.email === null ? null : str(u.email, 'a user email'),
        createdAt: num(u.createdAt, 'a user createdAt'),
        revokedAt: u.revokedAt === null ? null : num(u.revokedAt, 'a user revokedAt'),
      };
      state.users.set(UserState.key(record.tenant, record.name), record);
    }
    // Two active users with one address (a file edited by hand): a sign-in would be either.
    const byTenant = new Map<string, Array<[string, string]>>();
    for (const u of state.users.values())
      if (u.revokedAt === null && u.email !== null)
        byTenant.set(u.tenant, [...(byTenant.get(u.tenant) ?? []), [u.name, u.email]]);
    for (const [tenant, entries] of byTenant)
      for (const { first, second } of sameAddressPairs(entries))
        throw new Error(
          `users ${first} and ${second} of tenant ${tenant} have one e-mail address (compared without the case of A-Z or the domain's form): a sign-in with it must be one user; revoke one or change its address`,
        );
    for (const c of arr(value.codes, 'codes'))
      state.codes.set(str(c.hash, 'a code hash'), {
        tenant: str(c.tenant, 'a code tenant'),
        user: str(c.user, 'a code user'),
        createdAt: num(c.createdAt, 'a code createdAt'),
        expiresAt: num(c.expiresAt, 'a code expiresAt'),
      });
    for (const d of arr(value.devices, 'devices')) {
      const credentialHash = str(d.credentialHash, 'a device credentialHash');
      state.devices.set(credentialHash, {
        credentialHash,
        tenant: str(d.tenant, 'a device tenant'),
        user: str(d.user, 'a device user'),
        id: str(d.id, 'a device id'),
        label: str(d.label, 'a device label'),
        enrolledAt: num(d.enrolledAt, 'a device enrolledAt'),
      });
    }
    return state;
  }

  /** Users whose record or devices differ between two states (what the relay must re-check). */
  static changes(before: UserState, after: UserState): UserChange[] {
    const fingerprint = (s: UserState, key: string) => {
      const u = s.users.get(key);
      if (!u) return '';
      const devices = [...s.devices.values()]
        .filter((d) => d.tenant === u.tenant && d.user === u.name)
        .map((d) => d.credentialHash)
        .sort();
      return JSON.stringify([u, devices]);
    };
    const out: UserChange[] = [];
    for (const key of new Set([...before.users.keys(), ...after.users.keys()]))
      if (fingerprint(before, key) !== fingerprint(after, key)) {
        const [tenant, user] = key.split('\u0000') as [string, string];
        out.push({ tenant, user });
      }
    return out;
  }
}

function withoutHash(d: DeviceRecord & { credentialHash?: string }): DeviceRecord {
  return { tenant: d.tenant, user: d.user, id: d.id, label: d.label, enrolledAt: d.enrolledAt };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return !!x && typeof x === 'object' && !Array.isArray(x);
}
