/**
 * A fake Keycloak realm (issuer https://<host>/realms/<realm>; endpoints under
 * /realms/<realm>/protocol/openid-connect/: auth, token, certs), each behaviour from Keycloak's
 * documents or what public integrations recorded of its answers (docs/relay-protocol.md 2.3 and
 * 2.3.1 say what Screenpop relies on):
 *
 * - "Valid redirect URIs" are compared exactly, or as a prefix when a registered entry ends in
 *   `*`; any other redirect ends on Keycloak's own page "We're sorry... Invalid parameter:
 *   redirect_uri", not back at the app (keycloak/keycloak#10528, where a maintainer says it is
 *   shown when the redirect does not match the client's permitted ones; keycloak/keycloak#21300
 *   on loopback addresses).
 * - A public client ("Client authentication" off) with PKCE sends no secret. The code flow gives
 *   a refresh token whatever the scopes (`offline_access` makes it an offline one).
 * - The ID token carries `typ: "ID"` in its payload (an access token has `Bearer`), `azp` the
 *   client, `preferred_username`, and with the `email` scope `email` and `email_verified`; users
 *   federated from LDAP have `email_verified` false unless the federation trusts e-mail ("Trust
 *   Email"). Tokens live the realm's "Access Token Lifespan", 5 minutes by default.
 */
import {
  emailClaims,
  FakeIdp,
  json,
  page,
  publicClient,
  type FakeAccount,
  type Grant,
} from './fake-idp.ts';

export const KEYCLOAK_CLIENT = 'screenpop-desktop';
export const KEYCLOAK_REALM = 'acme';
/** Keycloak's default Access Token Lifespan (the ID token follows it). */
export const KEYCLOAK_TOKEN_TTL_SEC = 300;

/** A Keycloak person: `ldapUntrusted` for a user federated from LDAP without "Trust Email". */
export interface KeycloakAccount extends FakeAccount {
  ldapUntrusted?: boolean;
}

function redirectAllowed(uri: string, registered: readonly string[]): boolean {
  return registered.some((r) => (r.endsWith('*') ? uri.startsWith(r.slice(0, -1)) : uri === r));
}

export async function startFakeKeycloak(
  accounts: Record<string, KeycloakAccount>,
  /** The client's "Valid redirect URIs", as registered (an entry may end in `*`). */
  validRedirectUris: string[],
): Promise<FakeIdp> {
  const base = `/realms/${KEYCLOAK_REALM}`;
  return FakeIdp.start(
    {
      authorize(params) {
        if (params.get('client_id') !== KEYCLOAK_CLIENT)
          return page(400, "We're sorry... Client not found.");
        if (!redirectAllowed(params.get('redirect_uri') ?? '', validRedirectUris))
          return page(400, "We're sorry... Invalid parameter: redirect_uri");
        return null;
      },
      clientAuth: publicClient(
        KEYCLOAK_CLIENT,
        json(401, {
          error: 'unauthorized_client',
          error_description: 'Invalid client or Invalid client credentials',
        }),
      ),
      refreshToken: () => true,
      claims(grant: Grant) {
        const account = grant.account as KeycloakAccount;
        return {
          typ: 'ID',
          azp: grant.clientId,
          sid: 'a1b2c3d4-session',
          preferred_username: account.sub,
          ...emailClaims(grant, !account.ldapUntrusted),
          ...account.claims,
        };
      },
    },
    {
      paths: {
        issuer: base,
        authorize: `${base}/protocol/openid-connect/auth`,
        token: `${base}/protocol/openid-connect/token`,
        jwks: `${base}/protocol/openid-connect/certs`,
      },
      accounts,
      idTokenTtlSec: KEYCLOAK_TOKEN_TTL_SEC,
    },
  );
}
