/**
 * A fake Auth0 tenant (https://<tenant>.auth0.com/; endpoints /authorize, /oauth/token,
 * /.well-known/jwks.json), each behaviour from Auth0's documents or what public integrations
 * recorded of its answers (docs/relay-protocol.md 2.3 and 2.3.1 say what Screenpop relies on):
 *
 * - The issuer is the tenant's address WITH a trailing slash, `https://<tenant>.auth0.com/`, in
 *   the discovery document and in every token's `iss` (spring-projects/spring-boot#15324: "Auth0's
 *   iss field always has a trailing slash", and issuer checks that strip it fail). Discovery is at
 *   /.well-known/openid-configuration (OpenID Connect Discovery 4: the terminating `/` removed
 *   before the well-known path is appended).
 * - "Allowed Callback URLs" were reported to compare a loopback address with its port: a changing
 *   port ends on Auth0's page "Callback URL mismatch. <uri> is not in the list of allowed callback
 *   URLs" (curso-r/auth0#56), not back at the app.
 * - A native application with PKCE sends no secret; a refresh token comes only with the
 *   `offline_access` scope (and the application's Refresh Token grant).
 * - ID tokens live 36,000 s, 10 hours, by default (Auth0's "Get ID Tokens"; docs/relay-protocol.md
 *   2.3's maximum age is why a revoked user is still refused within the hour).
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

export const AUTH0_CLIENT = 'Xq2LWkAuth0NativeClient7u';
/** Auth0's default ID token lifetime. */
export const AUTH0_ID_TOKEN_TTL_SEC = 36_000;

export async function startFakeAuth0(
  accounts: Record<string, FakeAccount>,
  /** The application's "Allowed Callback URLs", compared exactly. */
  allowedCallbacks: string[],
): Promise<FakeIdp> {
  return FakeIdp.start(
    {
      authorize(params) {
        if (params.get('client_id') !== AUTH0_CLIENT)
          return page(400, 'Oops!, something went wrong. invalid_request: Unknown client');
        const uri = params.get('redirect_uri') ?? '';
        if (!allowedCallbacks.includes(uri))
          return page(
            400,
            `Oops!, something went wrong. Callback URL mismatch. ${uri} is not in the list of allowed callback URLs.`,
          );
        return null;
      },
      clientAuth: publicClient(
        AUTH0_CLIENT,
        json(401, { error: 'access_denied', error_description: 'Unauthorized' }),
      ),
      refreshToken: (grant: Grant) => grant.scope.includes('offline_access'),
      claims(grant: Grant) {
        const { account } = grant;
        return {
          nickname: account.sub,
          ...emailClaims(grant),
          ...account.claims,
        };
      },
    },
    {
      paths: {
        issuer: '/',
        authorize: '/authorize',
        token: '/oauth/token',
        jwks: '/.well-known/jwks.json',
      },
      accounts,
      idTokenTtlSec: AUTH0_ID_TOKEN_TTL_SEC,
    },
  );
}
