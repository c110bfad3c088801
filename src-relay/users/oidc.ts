import {
  createRemoteJWKSet,
  customFetch,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { RELAY_ERRCODE, type OrgSignInInfo } from '../../src-shared/relay/relay-protocol.ts';
import type { OidcConfig } from '../config.ts';
import type { UserStore } from './types.ts';
import { identityOf, refusal, type OidcSignIn, type UserVerdict } from './user-auth.ts';
import { secretHash } from './secrets.ts';
import { canonicalEmail } from '../../src-shared/rules/email-address.ts';

/** Signature algorithms accepted: asymmetric only (a shared-secret HS256 token is refused). */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** After a failed discovery, the provider is asked again at most this often (ms). */
const DISCOVERY_RETRY_MS = 10_000;

/** Verified tokens remembered (until their expiry), so a reconnect with the same token costs a look-up. */
const MAX_VERIFIED = 10_000;

/**
 * Where an e-mail address's extensions come from besides the config's mapping and the relay's
 * users: the phone system's extension list (`email_addr`), when the relay holds the service's
 * credential (gateway mode).
 */
export interface EmailDirectory {
  extensionsFor(tenant: string, email: string): Promise<string[] | null>;
}

export interface OidcDeps {
  tenant: string;
  config: OidcConfig;
  users: UserStore | null;
  clock: Clock;
  logger: Logger;
  fetch: typeof fetch;
  directory?: EmailDirectory;
  /**
   * How long after its `iat` an ID token admits a session (ms; the relay's
   * `clients.authMaxAgeMs`, default 60 min): a token older than that is refused, however far its
   * `exp` (Auth0's last 10 hours), and a session it opened ends then, however soon its `exp`
   * (Keycloak's last 5 minutes). See sessionEnd().
   */
  maxTokenAgeMs?: number;
}

/** Default of OidcDeps.maxTokenAgeMs, as `clients.authMaxAgeMs`'s. */
const MAX_TOKEN_AGE_MS = 60 * 60_000;

/**
 * A tenant's single sign-on (docs/relay-protocol.md section 2.3): the desktop presents the ID token
 * its user got from the organisation's OpenID provider (authorization code + PKCE); the relay
 * checks it as OpenID Connect Core 3.1.3.7 asks of a relying party that did not make the request:
 * the signature with a key of the provider's JWKS (asymmetric algorithms only), `iss` equal to the
 * configured issuer, `aud` holding the audience (the desktop's client id), `exp` in the future and
 * `iat` present and not in the future (with `clockToleranceSec` either way), and that it is an ID
 * token at all, not an access token, with `azp` when it has several audiences (notAnIdToken). (The
 * `nonce` and `at_hash` were the desktop's to check: it made the request and holds the access
 * token.) Claims the config requires must have their values (missingClaim: Google's `hd`,
 * Entra's `tid`) and the claim that vouches for the address must be `true` (vouchingClaim); the
 * address is compared by canonicalEmail, never folded. A token admits a session for the relay's
 * maximum age after its `iat` (sessionEnd). The e-mail claim then names the user (mapAddress): refused when a relay
 * user with that address (or named by it) is revoked, else the config's `users` mapping, then a
 * relay user with that `--email`, then the phone system's extension list.
 *
 * The provider's discovery document is read on first use (its `issuer` must equal the configured
 * one, OpenID Connect Discovery 4.3); its JWKS is cached by jose and fetched again for an unknown
 * key id at most every 30 s, so tokens signed with made-up key ids cannot make the relay hammer
 * the provider.
 */
export class OidcVerifier implements OidcSignIn {
  private readonly deps: OidcDeps;
  private keys: Promise<JWTVerifyGetKey> | undefined;
  private failedAt = -Infinity;
  private readonly verified = new Map<string, JWTPayload>();

  constructor(deps: OidcDeps) {
    this.deps = deps;
  }

  /** What desktops need to sign in (GET /v1/org/<tenant>). */
  info(): NonNullable<OrgSignInInfo['oidc']> {
    const { issuer, clientId, scopes, clientSecret, authorizationParams, redirectHost } =
      this.deps.config;
    const { redirectPort, emailClaim } = this.deps.config;
    return {
      issuer,
      clientId,
      scopes,
      ...(clientSecret ? { clientSecret } : {}),
      ...(authorizationParams ? { authorizationParams } : {}),
      ...(redirectHost ? { redirectHost } : {}),
      ...(redirectPort !== undefined ? { redirectPort } : {}),
      ...(emailClaim !== 'email' ? { emailClaim } : {}),
    };
  }

  async identify(token: string): Promise<UserVerdict> {
    const checked = await this.verify(token);
    if (!('claims' in checked)) return checked;
    // Checked on every use, the remembered tokens' too: age runs on.
    if (this.sessionEnd(checked.claims) <= this.deps.clock.now()) {
      this.deps.logger.info('sign-in token refused', { why: 'older-than-max-age' });
      return refusal(401, RELAY_ERRCODE.signInRequired, 'your sign-in has expired; sign in again');
    }
    return this.map(checked.claims);
  }

  /**
   * When a session opened with these claims ends (wall-clock ms): `maxTokenAgeMs` after the
   * token's `iat`, not at its `exp`. The relay verifies a sign-in once and keeps the session,
   * re-checking the user whenever the users change (a revocation closes it at once); the desktop
   * then renews its sign-in at the provider and reconnects. So a provider's short ID tokens
   * (Keycloak: 5 min) cost one reconnect per `maxTokenAgeMs`, not one per token, and its long ones
   * (Auth0: 10 h) stop admitting anyone `maxTokenAgeMs` after they were issued: a user the
   * provider disabled, whose desktop can no longer renew, is out within that time.
   */
  private sessionEnd(claims: JWTPayload): number {
    return (claims.iat ?? 0) * 1000 + (this.deps.maxTokenAgeMs ?? MAX_TOKEN_AGE_MS);
  }

  private async verify(
    token: string,
  ): Promise<{ claims: JWTPayload } | Extract<UserVerdict, { ok: false }>> {
    const { config, clock, logger } = this.deps;
    const hash = secretHash(token);
    const known = this.verified.get(hash);
    const nowSec = clock.now() / 1000;
    if (known && (known.exp ?? 0) + config.clockToleranceSec > nowSec) return { claims: known };
    if (known) this.verified.delete(hash);
    let keys: JWTVerifyGetKey;
    try {
      keys = await this.jwks();
    } catch (err) {
      logger.warn('sign-in provider not reachable', { error: err });
      return refusal(503, 0, 'the relay cannot reach the sign-in provider now; retry later');
    }
    try {
      const { payload, protectedHeader } = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: config.audience ?? config.clientId,
        algorithms: ALGORITHMS,
        clockTolerance: config.clockToleranceSec,
        currentDate: new Date(clock.now()),
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      const fault = notAnIdToken(protectedHeader.typ, payload, config, nowSec);
      if (fault) throw new NotAnIdToken(fault);
      if (this.verified.size >= MAX_VERIFIED)
        this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(hash, payload);
      return { claims: payload };
    } catch (err) {
      const why = tokenFault(err);
      logger.info('sign-in token refused', { why });
      if (why === 'provider-unreachable')
        return refusal(503, 0, 'the relay cannot reach the sign-in provider now; retry later');
      return refusal(
        401,
        RELAY_ERRCODE.signInRequired,
        why === 'expired'
          ? 'your sign-in has expired; sign in again'
          : 'this sign-in is not valid for this relay; sign in again',
      );
    }
  }

  /** The claims' e-mail address, checked, then mapped (mapAddress). */
  private async map(claims: JWTPayload): Promise<UserVerdict> {
    const { config } = this.deps;
    const raw = claims[config.emailClaim];
    const expiresAt = this.sessionEnd(claims);
    if (typeof raw !== 'string' || !raw.includes('@'))
      return refusal(
        403,
        RELAY_ERRCODE.notMapped,
        `the sign-in carries no e-mail address (claim ${config.emailClaim}); ask your administrator`,
      );
    const missing = missingClaim(claims, config.requiredClaims);
    if (missing !== null) {
      this.deps.logger.info('sign-in refused: a required claim differs', { claim: missing });
      return refusal(
        403,
        RELAY_ERRCODE.otherAccount,
        `this sign-in is not one of your organisation's accounts (claim ${missing}); sign in with your organisation's account`,
      );
    }
    const vouching = vouchingClaim(config);
    if (vouching !== null && claims[vouching] !== true) {
      this.deps.logger.info('sign-in refused: the address is not vouched for', {
        claim: vouching,
        present: vouching in claims,
      });
      return refusal(
        403,
        RELAY_ERRCODE.notMapped,
        `the provider has not verified this e-mail address (claim ${vouching}); ask your administrator`,
      );
    }
    return this.mapAddress(raw, expiresAt);
  }

  /**
   * The user an e-mail address is. A revocation comes first, however the address would be
   * mapped: a revoked relay user with this address (or named by it: `relay users revoke
   * <address>`). Then the config's mapping, an active relay user, the phone system's list.
   */
  async mapAddress(address: string, expiresAt: number | null): Promise<UserVerdict> {
    const { config, tenant, users, directory, logger } = this.deps;
    const email = canonicalEmail(address);
    if (email === null) {
      logger.info('sign-in not mapped: not an address the relay compares', { tenant });
      return refusal(
        403,
        RELAY_ERRCODE.notMapped,
        'the sign-in’s e-mail address has characters the relay does not accept; ask your administrator',
      );
    }
    try {
      const user = (await users?.findByEmail(tenant, email)) ?? null;
      const named = user ? null : ((await users?.findUser(tenant, email)) ?? null);
      if ((user ?? named)?.revokedAt != null)
        return refusal(
          401,
          RELAY_ERRCODE.revoked,
          'your access was revoked; ask your administrator',
        );
      const mapped = Object.entries(config.users).find(([e]) => canonicalEmail(e) === email)?.[1];
      if (mapped)
        return {
          ok: true,
          identity: identityOf({ name: email, ...mapped }, 'oidc', expiresAt),
          credentialHash: '',
        };
      if (user)
        return { ok: true, identity: identityOf(user, 'oidc', expiresAt), credentialHash: '' };
      const extensions = await directory?.extensionsFor(tenant, email);
      if (extensions && extensions.length > 0)
        return {
          ok: true,
          identity: identityOf({ name: email, extensions, dids: [] }, 'oidc', expiresAt),
          credentialHash: '',
        };
    } catch (err) {
      logger.warn('sign-in not mapped: a look-up failed', { error: err });
      return refusal(503, 0, 'the relay cannot look up your extensions now; retry later');
    }
    logger.info('sign-in not mapped', { tenant });
    return refusal(
      403,
      RELAY_ERRCODE.notMapped,
      'you are signed in, but no extension is assigned to you on the relay; ask your administrator',
    );
  }

  /** The provider's JWKS, found through its discovery document (once; again after a failure). */
  private jwks(): Promise<JWTVerifyGetKey> {
    if (this.keys) return this.keys;
    const now = this.deps.clock.monotonic();
    if (now - this.failedAt < DISCOVERY_RETRY_MS)
      return Promise.reject(new Error('discovery failed a moment ago'));
    const { config, fetch } = this.deps;
    const discovered = (async () => {
      const base = config.issuer.replace(/\/+$/, '');
      const res = await fetch(`${base}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(5_000),
        headers: { Accept: 'application/json' },
      });
      if (!res.ok) throw new Error(`discovery answered ${res.status}`);
      const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc.issuer !== config.issuer)
        throw new Error('the discovery document names another issuer (check oidc.issuer, exactly)');
      if (typeof doc.jwks_uri !== 'string')
        throw new Error('the discovery document has no jwks_uri');
      return createRemoteJWKSet(new URL(doc.jwks_uri), {
        timeoutDuration: 5_000,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
        [customFetch]: fetch,
      });
    })();
    this.keys = discovered;
    discovered.catch(() => {
      this.keys = undefined;
      this.failedAt = this.deps.clock.monotonic();
    });
    return discovered;
  }
}

/**
 * Why a token that verified (signature, issuer, audience, times) is still not an ID token for the
 * desktop, or null. The rules hold for what the providers people use actually issue:
 * - Access tokens are refused. RFC 9068 section 2.1 types JWT access tokens `at+jwt` (Auth0,
 *   Okta's custom servers, oidc-provider; compared without case, also as `application/at+jwt`);
 *   Entra ID's and Okta's access tokens carry `scp`, RFC 9068's and Auth0's `scope`: an ID token
 *   has neither (OpenID Connect Core 2). Keycloak marks its tokens in the payload's `typ`: `ID`
 *   for ID tokens, `Bearer` or `Refresh` otherwise. Cognito's `token_use` is `id` or `access`.
 * - `iat` after now (beyond `clockToleranceSec`) is refused: a provider does not sign in the
 *   future (OpenID Connect Core 3.1.3.7 step 10 lets a client bound `iat`; jose checks it only
 *   with a maximum age).
 * - With several audiences, `azp` must be present and be the client id; an `azp` present with one
 *   audience must be the client id too (Core 2 and 3.1.3.7 steps 4-5). Google and Keycloak send
 *   `azp` equal to the client id; Entra ID's v2 ID tokens have a single `aud` and no `azp`.
 * Sources: docs/relay-protocol.md 2.3 ("Sources of the claim rules").
 */
function notAnIdToken(
  typ: string | undefined,
  claims: JWTPayload,
  config: OidcConfig,
  nowSec: number,
): string | null {
  const type = (typ ?? '').toLowerCase().replace(/^application\//, '');
  if (type === 'at+jwt') return 'access-token';
  if ('scp' in claims || 'scope' in claims) return 'access-token';
  if (claims.typ !== undefined && claims.typ !== 'ID') return 'access-token';
  if (claims.token_use !== undefined && claims.token_use !== 'id') return 'access-token';
  if (typeof claims.iat !== 'number' || claims.iat > nowSec + config.clockToleranceSec)
    return 'issued-in-future';
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (audiences.length > 1 && claims.azp === undefined) return 'azp-missing';
  if (claims.azp !== undefined && claims.azp !== config.clientId) return 'azp';
  return null;
}

class NotAnIdToken extends Error {}

/**
 * The claim by which the provider vouches for the e-mail claim, or null for none. A claim named
 * here must be the boolean `true` (OpenID Connect Core 5.1 makes `email_verified` a boolean; the
 * text `"true"`, `1` or an absent claim are not a yes). `oidc.emailVerifiedClaim` says which;
 * absent, it follows the e-mail claim:
 * - `email`: `email_verified`, which Google, Okta, Auth0 and Keycloak send with the `email` scope
 *   (Keycloak's LDAP users are verified only with the federation's "Trust Email" on); at a
 *   Microsoft Entra ID issuer `xms_edov` instead ("email domain owner verified", an optional claim
 *   the app registration must ask for: Entra never sends `email_verified`, and its `email` is
 *   whatever the user's mail attribute says);
 * - another claim (Entra's `preferred_username`, `upn`): none, nothing the provider sends vouches
 *   for it; the administrator chose the directory's name as the address.
 * `null` configured: none, whatever the claim (a provider that vouches in no claim at all).
 * Sources: docs/relay-protocol.md 2.3 ("Sources of the claim rules").
 */
export function vouchingClaim(
  config: Pick<OidcConfig, 'emailClaim' | 'emailVerifiedClaim' | 'issuer'>,
): string | null {
  if (config.emailVerifiedClaim !== undefined) return config.emailVerifiedClaim;
  if (config.emailClaim !== 'email') return null;
  return isEntraIssuer(config.issuer) ? 'xms_edov' : 'email_verified';
}

/** Microsoft Entra ID's issuers (v2 `login.microsoftonline.com/<tenant>/v2.0`, v1 `sts.windows.net`, national clouds). */
function isEntraIssuer(issuer: string): boolean {
  let host: string;
  try {
    host = new URL(issuer).hostname;
  } catch {
    return false;
  }
  return /^(login\.microsoftonline\.(com|us)|login\.partner\.microsoftonline\.cn|sts\.windows\.net)$/.test(
    host,
  );
}

/**
 * The first configured required claim (`oidc.requiredClaims`) the token lacks or carries with
 * another value, or null. Values are compared exactly (text, no case folding): Google's `hd` is
 * the Workspace domain as the organisation registered it, Entra's `tid` a GUID.
 */
function missingClaim(claims: JWTPayload, required: OidcConfig['requiredClaims']): string | null {
  for (const [name, want] of Object.entries(required ?? {})) {
    const value = claims[name];
    const allowed = typeof want === 'string' ? [want] : want;
    if (typeof value !== 'string' || !allowed.includes(value)) return name;
  }
  return null;
}

/** Why jose refused a token, in one word for the log (never the token). */
function tokenFault(err: unknown): string {
  if (err instanceof NotAnIdToken) return err.message;
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `claim-${err.claim}`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (err instanceof errors.JWKSNoMatchingKey) return 'unknown-key';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'algorithm';
  if (err instanceof errors.JWKSTimeout) return 'provider-unreachable';
  if (err instanceof errors.JOSEError) return err.code;
  if (err instanceof TypeError) return 'provider-unreachable';
  return 'malformed';
}
