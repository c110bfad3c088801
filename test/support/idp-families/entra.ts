/**
 * A fake Microsoft Entra ID (the Microsoft identity platform's v2.0 endpoints,
 * https://login.microsoftonline.com/<tenant>/v2.0), each behaviour from Microsoft's pages or what
 * public integrations recorded of its answers:
 *
 * - A tenant's discovery document (<tenant>/v2.0/.well-known/openid-configuration) names the
 *   tenant's issuer, https://login.microsoftonline.com/<tenant id>/v2.0; the /common and
 *   /organizations documents name `https://login.microsoftonline.com/{tenantid}/v2.0`, the
 *   literal template, which no token carries: a token's `iss` is its user's tenant
 *   (learn.microsoft.com/entra/identity-platform/v2-protocols-oidc, "Find your app's OpenID
 *   configuration document URI"; MicrosoftDocs/azure-docs#38427, where Microsoft calls it
 *   inherent to /common; coreos/go-oidc#344).
 * - A "Mobile and desktop applications" redirect on the loopback interface matches whatever its
 *   port (learn.microsoft.com/entra/identity-platform/reply-url, "Localhost exceptions"); any
 *   other mismatch ends on Entra's page AADSTS50011, not back at the app.
 * - A public client with PKCE sends no secret; `offline_access` gives a refresh token
 *   (learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow).
 * - ID token claims (learn.microsoft.com/entra/identity-platform/id-token-claims-reference and
 *   optional-claims-reference): `tid` the tenant, `oid`, `preferred_username` (the sign-in name,
 *   the UPN, which can change and is not to be used for authorisation decisions), `email` only
 *   when the user has a mail attribute (and the app asks for it), never `email_verified`;
 *   `xms_edov` (optional claim) says whether the e-mail's domain is verified by the tenant.
 */
import type http from 'node:http';
import {
  FakeIdp,
  isLoopbackRedirect,
  json,
  page,
  publicClient,
  type FakeAccount,
  type Grant,
} from './fake-idp.ts';

export const ENTRA_TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
export const ENTRA_CLIENT = '6731de76-14a6-49ae-97bc-6eba6914391e';

/** The issuer the /common and /organizations documents publish, template and all. */
export const ENTRA_TEMPLATE_ISSUER_PATH = '/{tenantid}/v2.0';

/** A loopback redirect compared without its port (Entra's localhost exception). */
function sameRedirect(registered: string, asked: string): boolean {
  if (!isLoopbackRedirect(asked) || !isLoopbackRedirect(registered)) return registered === asked;
  const a = new URL(asked);
  const r = new URL(registered);
  return a.hostname === r.hostname && a.pathname === r.pathname && a.search === r.search;
}

export async function startFakeEntra(
  accounts: Record<string, FakeAccount>,
  /** The app registration's redirect URIs (Mobile and desktop applications). */
  redirectUris: string[] = ['http://127.0.0.1/callback'],
): Promise<FakeIdp> {
  const tenantPath = `/${ENTRA_TENANT}`;
  return FakeIdp.start(
    {
      authorize(params) {
        if (params.get('client_id') !== ENTRA_CLIENT)
          return page(
            400,
            `AADSTS700016: Application with identifier '${params.get('client_id')}' was not found in the directory.`,
          );
        const asked = params.get('redirect_uri') ?? '';
        if (!redirectUris.some((r) => sameRedirect(r, asked)))
          return page(
            400,
            `AADSTS50011: The redirect URI '${asked}' specified in the request does not match the redirect URIs configured for the application '${ENTRA_CLIENT}'.`,
          );
        return null;
      },
      clientAuth: publicClient(
        ENTRA_CLIENT,
        json(400, { error: 'unauthorized_client', error_description: 'AADSTS700016' }),
      ),
      refreshToken: (grant: Grant) => grant.scope.includes('offline_access'),
      claims(grant: Grant) {
        const { account } = grant;
        return {
          ver: '2.0',
          tid: ENTRA_TENANT,
          oid: account.sub,
          ...(grant.scope.includes('email') && account.email ? { email: account.email } : {}),
          ...account.claims,
        };
      },
      route(path: string, res: http.ServerResponse, idp: FakeIdp) {
        const m = /^\/(common|organizations)\/v2\.0\/\.well-known\/openid-configuration$/.exec(
          path,
        );
        if (!m) return false;
        const doc = idp.discovery(idp.origin + ENTRA_TEMPLATE_ISSUER_PATH);
        for (const key of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'])
          doc[key] = String(doc[key]).replace(tenantPath, `/${m[1]}`);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(doc));
        return true;
      },
    },
    {
      paths: {
        issuer: `${tenantPath}/v2.0`,
        authorize: `${tenantPath}/oauth2/v2.0/authorize`,
        token: `${tenantPath}/oauth2/v2.0/token`,
        jwks: `${tenantPath}/discovery/v2.0/keys`,
      },
      accounts,
    },
  );
}
