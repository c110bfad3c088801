/**
 * The credential of organisation mode (docs/relay-protocol.md 2.2, 2.3): what a desktop or the
 * runner presents to the relay instead of a service token. Either this device's enrolment
 * credential, or a sign-in with the organisation's OpenID provider (its refresh token kept, an ID
 * token made from it when needed). Both live in the keychain under one account per relay and
 * tenant (`org:<tenant>@<relay host>`); neither is the phone system's secret, and in this mode the
 * machine holds no such secret at all.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import { ServiceError } from '../../../src-shared/api/service-errors.ts';
import type { CredentialStore } from '../credentials/credential-store.ts';
import type { AccessToken, TokenSource } from '../events/contracts.ts';
import { relayHttpUrl } from '../relay-client/relay-source.ts';
import { OidcSignInError, refreshSignIn, type OidcProviderInfo } from './oidc-sign-in.ts';

export type OrgCredential =
  | { kind: 'device'; credential: string }
  | { kind: 'oidc'; refreshToken: string; provider: OidcProviderInfo; email: string | null };

/** The keychain account of a relay's tenant. */
export function orgKeychainAccount(relayUrl: string, tenant: string): string {
  return `org:${tenant}@${new URL(relayHttpUrl(relayUrl, '/')).host}`;
}

/** Reads a stored credential; null for none or one this version cannot read. */
export function parseOrgCredential(text: string | null): OrgCredential | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    if (v.kind === 'device' && typeof v.credential === 'string')
      return { kind: 'device', credential: v.credential };
    const p = v.provider as Record<string, unknown> | undefined;
    if (
      v.kind === 'oidc' &&
      typeof v.refreshToken === 'string' &&
      p &&
      typeof p.issuer === 'string' &&
      typeof p.clientId === 'string' &&
      Array.isArray(p.scopes)
    )
      return {
        kind: 'oidc',
        refreshToken: v.refreshToken,
        provider: { issuer: p.issuer, clientId: p.clientId, scopes: p.scopes.map(String) },
        email: typeof v.email === 'string' ? v.email : null,
      };
  } catch {
    // fall through: not ours
  }
  return null;
}

export interface OrgTokenSourceDeps {
  store: CredentialStore;
  account: string;
  fetch: typeof fetch;
  clock: Clock;
  logger: Logger;
  secrets: SecretRegistry;
  /** An ID token with less than this left is renewed first (ms). Default 60 s. */
  renewAheadMs?: number;
}

const FAR_FUTURE = 8.64e15;

export class OrgTokenSource implements TokenSource {
  private readonly deps: OrgTokenSourceDeps;
  private idToken: AccessToken | undefined;
  private refusedDevice: string | undefined;
  private renewing: Promise<AccessToken> | undefined;

  constructor(deps: OrgTokenSourceDeps) {
    this.deps = deps;
  }

  /** Keeps a new credential (after an enrolment or a sign-in) and forgets the old one's state. */
  async save(credential: OrgCredential, idToken?: AccessToken): Promise<void> {
    const { secrets, store, account } = this.deps;
    secrets.add(credential.kind === 'device' ? credential.credential : credential.refreshToken);
    await store.setSecret(account, JSON.stringify(credential));
    this.refusedDevice = undefined;
    this.idToken = idToken;
    if (idToken) secrets.add(idToken.value);
  }

  async credential(): Promise<OrgCredential | null> {
    const stored = parseOrgCredential(await this.deps.store.getSecret(this.deps.account));
    if (stored)
      this.deps.secrets.add(stored.kind === 'device' ? stored.credential : stored.refreshToken);
    return stored;
  }

  async getToken(): Promise<AccessToken> {
    const stored = await this.credential();
    if (!stored)
      throw new ServiceError({
        kind: 'sign-in',
        fault: 'not-signed-in',
        message: 'not signed in to the organisation',
      });
    if (stored.kind === 'device') {
      if (stored.credential === this.refusedDevice)
        throw new ServiceError({
          kind: 'sign-in',
          fault: 'not-enrolled',
          message: 'the relay no longer accepts this device',
        });
      return { value: stored.credential, expiresAt: FAR_FUTURE };
    }
    const ahead = this.deps.renewAheadMs ?? 60_000;
    if (this.idToken && this.idToken.expiresAt - this.deps.clock.now() > ahead) return this.idToken;
    this.renewing ??= this.renew(stored).finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  invalidate(value: string): void {
    if (this.idToken?.value === value) this.idToken = undefined;
    else if (value.startsWith('sprd_')) this.refusedDevice = value;
  }

  private async renew(stored: Extract<OrgCredential, { kind: 'oidc' }>): Promise<AccessToken> {
    const { fetch, secrets, logger } = this.deps;
    try {
      const tokens = await refreshSignIn(stored.provider, stored.refreshToken, { fetch });
      secrets.add(tokens.idToken);
      if (tokens.refreshToken && tokens.refreshToken !== stored.refreshToken)
        await this.save({ ...stored, refreshToken: tokens.refreshToken });
      this.idToken = { value: tokens.idToken, expiresAt: tokens.idTokenExpiresAt };
      return this.idToken;
    } catch (error) {
      if (error instanceof OidcSignInError && error.kind === 'cancelled') {
        logger.warn('the organisation sign-in was not renewed; the user must sign in again');
        throw new ServiceError({
          kind: 'sign-in',
          fault: 'sign-in-expired',
          message: 'the sign-in provider no longer renews the sign-in',
          cause: error,
        });
      }
      throw new ServiceError({
        kind: 'network',
        message: `the sign-in provider could not be reached (${new URL(stored.provider.issuer).host})`,
        values: { host: new URL(stored.provider.issuer).host },
        cause: error,
      });
    }
  }
}
