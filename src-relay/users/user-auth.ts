import type { Logger } from '../../src-shared/process/log.ts';
import {
  DEVICE_CREDENTIAL_PREFIX,
  RELAY_ERRCODE,
  type RelayIdentity,
} from '../../src-shared/relay/relay-protocol.ts';
import { secretHash } from './secrets.ts';
import type { UserRecord, UserStore } from './types.ts';

/** Who a handshake in organisation mode is, or why it is refused (an HTTP answer). */
export type UserVerdict =
  | { ok: true; identity: RelayIdentity; credentialHash: string }
  | { ok: false; status: 401 | 403 | 503; errcode: number; reason: string };

/**
 * Checks a bearer credential that should be one of this relay's users (a tenant with
 * `access: "users"`) and returns the user's identity, the filter the relay enforces for the
 * session. A device credential (`sprd_...`) is looked up by its SHA-256; an OpenID Connect token
 * is checked by `oidc` (the tenant's provider), then mapped to a user. A service access token is
 * refused here: in organisation mode a desktop holds no credential of the phone system.
 */
export interface OidcSignIn {
  /** Verifies the token (signature, issuer, audience, expiry) and maps it to extensions. */
  identify(token: string): Promise<UserVerdict>;
  /** Maps an e-mail address as a sign-in's is mapped (revocation first); for re-checks. */
  mapAddress(email: string, expiresAt: number | null): Promise<UserVerdict>;
}

export interface UserAuthDeps {
  users: UserStore;
  logger: Logger;
  /** The tenant's OpenID Connect sign-in, when configured (oidc.ts). */
  oidc?: (tenant: string) => OidcSignIn | undefined;
}

export class UserAuthenticator {
  private readonly deps: UserAuthDeps;

  constructor(deps: UserAuthDeps) {
    this.deps = deps;
  }

  async authenticate(tenant: string, token: string): Promise<UserVerdict> {
    const hash = secretHash(token);
    if (token.startsWith(DEVICE_CREDENTIAL_PREFIX)) {
      let found;
      try {
        found = await this.deps.users.findDevice(tenant, hash);
      } catch (err) {
        this.deps.logger.warn('users store unreachable', { error: err });
        return UNAVAILABLE;
      }
      if (!found)
        return refusal(
          401,
          RELAY_ERRCODE.signInRequired,
          'this device is not enrolled (or was revoked); enrol it again with a new code',
        );
      return { ok: true, identity: identityOf(found.user, 'device', null), credentialHash: hash };
    }
    const oidc = this.deps.oidc?.(tenant);
    if (oidc && token.split('.').length === 3) {
      const verdict = await oidc.identify(token);
      return verdict.ok ? { ...verdict, credentialHash: hash } : verdict;
    }
    return refusal(
      401,
      RELAY_ERRCODE.signInRequired,
      'this relay admits its users only: sign in with your organisation or enrol this device',
    );
  }

  /**
   * Whether an open session may go on after a change to its user: 'ok', 'revoked' (close with
   * 4003), or 'changed' (extensions or numbers differ: close with 4002 so it reconnects with the
   * new ones).
   */
  async recheck(
    tenant: string,
    identity: RelayIdentity,
    credentialHash: string,
  ): Promise<'ok' | 'revoked' | 'changed'> {
    const { users } = this.deps;
    const same = (a: readonly string[], b: readonly string[]) =>
      a.length === b.length && a.every((x, i) => x === b[i]);
    if (identity.via === 'oidc') {
      // The address is mapped again as at sign-in: a relay user, the config's mapping or the phone
      // system's list, a revocation before any of them. (A session named by its address was
      // mapped without a user record of its own; one named otherwise, by that user's address.)
      const record = await users.findUser(tenant, identity.user);
      const email = record?.email ?? identity.user;
      const oidc = this.deps.oidc?.(tenant);
      if (!oidc) return 'revoked';
      const verdict = await oidc.mapAddress(email, identity.expiresAt);
      if (!verdict.ok) {
        if (verdict.status === 503) throw new Error(verdict.reason);
        return verdict.errcode === RELAY_ERRCODE.revoked ? 'revoked' : 'changed';
      }
      const now = verdict.identity;
      return now.user === identity.user &&
        same(now.extensions, identity.extensions) &&
        same(now.dids, identity.dids)
        ? 'ok'
        : 'changed';
    }
    const user = (await users.findDevice(tenant, credentialHash))?.user ?? null;
    if (user === null || user.revokedAt !== null) return 'revoked';
    return same(user.extensions, identity.extensions) && same(user.dids, identity.dids)
      ? 'ok'
      : 'changed';
  }
}

export function identityOf(
  user: Pick<UserRecord, 'name' | 'extensions' | 'dids'>,
  via: RelayIdentity['via'],
  expiresAt: number | null,
): RelayIdentity {
  return {
    user: user.name,
    via,
    extensions: [...user.extensions],
    dids: [...user.dids],
    expiresAt,
  };
}

export function refusal(
  status: 401 | 403 | 503,
  errcode: number,
  reason: string,
): Extract<UserVerdict, { ok: false }> {
  return { ok: false, status, errcode, reason };
}

const UNAVAILABLE = refusal(503, 0, 'the relay cannot read its users now; retry later');
