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
import {
  TOKEN_RENEW_MARGIN_MS,
  TokenLifecycle,
  type RenewablePair,
} from '../../../src-shared/api/token-lifecycle.ts';
import type { CredentialStore } from '../credentials/credential-store.ts';
import type { AccessToken, TokenSource } from '../events/contracts.ts';
import { relayHttpUrl } from '../relay-client/relay-source.ts';
import { OidcSignInError, refreshSignIn, type OidcProviderInfo } from './oidc-sign-in.ts';

export type OrgCredential =
  | { kind: 'device'; credential: string }
  | {
      kind: 'oidc';
      /**
       * null when the provider gave none: the sign-in then lasts as long as its ID token, kept
       * here with it so that a restart within that time does not ask again.
       */
      refreshToken: string | null;
      provider: OidcProviderInfo;
      email: string | null;
      idToken?: AccessToken;
    };

/** The secrets a stored credential holds, for the log scrubber. */
function secretsOf(credential: OrgCredential): string[] {
  if (credential.kind === 'device') return [credential.credential];
  return [
    credential.refreshToken,
    credential.idToken?.value,
    credential.provider.clientSecret,
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}

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
    const id = v.idToken as Record<string, unknown> | undefined;
    if (
      v.kind === 'oidc' &&
      (typeof v.refreshToken === 'string' || v.refreshToken === null) &&
      p &&
      typeof p.issuer === 'string' &&
      typeof p.clientId === 'string' &&
      Array.isArray(p.scopes)
    )
      return {
        kind: 'oidc',
        refreshToken: v.refreshToken,
        provider: {
          issuer: p.issuer,
          clientId: p.clientId,
          scopes: p.scopes.map(String),
          // A refresh at a provider that wants the secret needs it again.
          ...(typeof p.clientSecret === 'string' ? { clientSecret: p.clientSecret } : {}),
        },
        email: typeof v.email === 'string' ? v.email : null,
        ...(id && typeof id.value === 'string' && typeof id.expiresAt === 'number'
          ? { idToken: { value: id.value, expiresAt: id.expiresAt } }
          : {}),
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
  /** An ID token with less than this left is renewed first (ms). TOKEN_RENEW_MARGIN_MS by default. */
  renewAheadMs?: number;
}

const FAR_FUTURE = 8.64e15;

/** An ID token on the one token lifecycle, renewed with the sign-in's refresh token. */
type IdTokenPair = RenewablePair;

/**
 * The token a desktop presents to the relay: the device credential as it is, or an ID token kept
 * on the one token lifecycle (src-shared/api/token-lifecycle.ts: renewed `renewAheadMs` before its
 * end, single flight, replaced ones retired from the secret registry). A refusal is remembered:
 * a device credential the relay refused is not presented again until a new one is saved.
 */
export class OrgTokenSource implements TokenSource {
  private readonly deps: OrgTokenSourceDeps;
  private readonly life: TokenLifecycle<IdTokenPair>;
  private refusedDevice: string | undefined;
  /** The sign-in the next renewal uses (read from the keychain by getToken). */
  private signIn: Extract<OrgCredential, { kind: 'oidc' }> | undefined;
  /** An ID token the relay refused: not taken again from the keychain. */
  private refusedIdToken: string | undefined;

  constructor(deps: OrgTokenSourceDeps) {
    this.deps = deps;
    this.life = new TokenLifecycle<IdTokenPair>(
      // There is no sign-in without the user: an ID token comes from the stored refresh token.
      { signIn: () => this.renew() },
      {
        clock: deps.clock,
        secrets: deps.secrets,
        logger: deps.logger,
        marginMs: deps.renewAheadMs ?? TOKEN_RENEW_MARGIN_MS,
        signIn: null,
      },
    );
  }

  /** Keeps a new credential (after an enrolment or a sign-in) and forgets the old one's state. */
  async save(credential: OrgCredential, idToken?: AccessToken): Promise<void> {
    await this.keep(credential);
    this.refusedDevice = undefined;
    this.life.discard();
    if (idToken && credential.kind === 'oidc') this.life.adopt(idTokenPair(idToken, credential));
  }

  async credential(): Promise<OrgCredential | null> {
    const stored = parseOrgCredential(await this.deps.store.getSecret(this.deps.account));
    if (stored) for (const secret of secretsOf(stored)) this.deps.secrets.add(secret);
    return stored;
  }

  async getToken(): Promise<AccessToken> {
    const stored = await this.credential();
    if (!stored) throw notSignedIn();
    if (stored.kind === 'device') {
      if (stored.credential === this.refusedDevice)
        throw new ServiceError({
          kind: 'sign-in',
          fault: 'not-enrolled',
          message: 'the relay no longer accepts this device',
        });
      return { value: stored.credential, expiresAt: FAR_FUTURE };
    }
    this.signIn = stored;
    // The ID token kept with a sign-in that has no refresh token (after a restart).
    if (!this.life.current() && stored.idToken && stored.idToken.value !== this.refusedIdToken)
      this.life.adopt(idTokenPair(stored.idToken, stored));
    const pair = await this.life.get();
    return { value: pair.accessToken, expiresAt: pair.accessExpiresAt };
  }

  invalidate(value: string): void {
    if (this.life.invalidate(value)) this.refusedIdToken = value;
    else if (value.startsWith('sprd_')) this.refusedDevice = value;
  }

  /** The stored credential, in the keychain and registered as a secret. */
  private async keep(credential: OrgCredential): Promise<void> {
    for (const secret of secretsOf(credential)) this.deps.secrets.add(secret);
    await this.deps.store.setSecret(this.deps.account, JSON.stringify(credential));
  }

  private async renew(): Promise<IdTokenPair> {
    const stored = this.signIn;
    if (!stored) throw notSignedIn();
    const { fetch, logger } = this.deps;
    if (!stored.refreshToken) {
      // Nothing to renew with: the sign-in ends with its ID token, and the person signs in again.
      logger.info('the organisation sign-in has ended (the provider gave no refresh token)');
      throw new ServiceError({
        kind: 'sign-in',
        fault: 'sign-in-expired',
        message: 'the sign-in has ended and the provider gave nothing to renew it with',
      });
    }
    try {
      const tokens = await refreshSignIn(stored.provider, stored.refreshToken, { fetch });
      const refreshToken = tokens.refreshToken ?? stored.refreshToken;
      if (refreshToken !== stored.refreshToken) await this.keep({ ...stored, refreshToken });
      return idTokenPair(
        { value: tokens.idToken, expiresAt: tokens.idTokenExpiresAt },
        { ...stored, refreshToken },
      );
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

/** No credential of the relay in the keychain: the user signs in (or enrols) first. */
export function notSignedIn(): ServiceError {
  return new ServiceError({
    kind: 'sign-in',
    fault: 'not-signed-in',
    message: 'not signed in to the organisation',
  });
}

function idTokenPair(
  idToken: AccessToken,
  signIn: Extract<OrgCredential, { kind: 'oidc' }>,
): IdTokenPair {
  return {
    accessToken: idToken.value,
    accessExpiresAt: idToken.expiresAt,
    // No refresh token (the provider gave none): nothing to renew with, nothing to register.
    refreshToken: signIn.refreshToken ?? '',
    refreshExpiresAt: FAR_FUTURE,
  };
}
