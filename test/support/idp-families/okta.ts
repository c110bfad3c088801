/**
 * A fake Okta authorization server (the "default" custom server, issuer
 * https://<your Okta domain>/oauth2/default; Okta's "Authorization servers" and OpenID Connect API
 * pages, developer.okta.com/docs/reference/api/oidc/: /v1/authorize, /v1/token, /v1/keys), each
 * behaviour from Okta's pages or what public integrations recorded of its answers:
 *
 * - The redirect address must be one of the app integration's "Sign-in redirect URIs", compared
 *   exactly, port included: a loopback address on another port than the registered one is refused
 *   like any other. Okta then does not come back to the app: it shows its own 400 page, "Your
 *   request resulted in an error. The 'redirect_uri' parameter must be a Login redirect URI in the
 *   client app settings: https://<domain>/admin/app/oidc_client/instance/<client id>#tab-general"
 *   (backstage/backstage#12006, Colin-b/httpx_auth#110). RFC 8252 7.3's any-port rule is not
 *   applied (okpy/ok#1016 and the issue this work answers describe the random port failing).
 * - A "Native app" integration with PKCE needs no client secret (client authentication "None").
 * - A refresh token comes with the `offline_access` scope when the integration allows the Refresh
 *   Token grant (Okta's "Refresh access tokens" guide).
 * - The ID token carries `email` and `email_verified` with the email scope, `ver` 1 and `idp`.
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

export const OKTA_NATIVE_CLIENT = '0oa1native2client3id4';

export async function startFakeOkta(
  accounts: Record<string, FakeAccount>,
  /** The integration's Sign-in redirect URIs, exactly as registered. */
  redirectUris: string[],
): Promise<FakeIdp> {
  const idp = await FakeIdp.start(
    {
      authorize(params) {
        if (params.get('client_id') !== OKTA_NATIVE_CLIENT)
          return page(
            400,
            "Your request resulted in an error. Invalid value for 'client_id' parameter.",
          );
        if (!redirectUris.includes(params.get('redirect_uri') ?? ''))
          return page(
            400,
            "Your request resulted in an error. The 'redirect_uri' parameter must be a Login redirect URI in the client app settings: " +
              `${idp.origin}/admin/app/oidc_client/instance/${OKTA_NATIVE_CLIENT}#tab-general`,
          );
        return null;
      },
      clientAuth: publicClient(
        OKTA_NATIVE_CLIENT,
        json(401, { error: 'invalid_client', error_description: 'The client_id is not valid.' }),
      ),
      refreshToken: (grant: Grant) => grant.scope.includes('offline_access'),
      claims(grant: Grant) {
        const { account } = grant;
        return {
          ver: 1,
          idp: '00o1okta2idp3',
          amr: ['pwd'],
          ...emailClaims(grant),
          ...account.claims,
        };
      },
    },
    {
      paths: {
        issuer: '/oauth2/default',
        authorize: '/oauth2/default/v1/authorize',
        token: '/oauth2/default/v1/token',
        jwks: '/oauth2/default/v1/keys',
      },
      accounts,
    },
  );
  return idp;
}
