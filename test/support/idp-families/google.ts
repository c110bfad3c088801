/**
 * A fake Google (accounts.google.com) for the sign-in flow, each behaviour from Google's pages or
 * what public integrations recorded of its answers:
 *
 * - Only a "Desktop app" client may use a loopback redirect (Google's "Loopback IP address flow
 *   migration guide", developers.google.com/identity/protocols/oauth2/resources/loopback-migration:
 *   blocked for Android, iOS and Chrome app clients, kept for desktop apps), with any port
 *   (developers.google.com/identity/protocols/oauth2/native-app, "Loopback IP address").
 * - Its token endpoint wants `client_secret` from a Desktop client even with PKCE: the native-app
 *   page exempts only Android, iOS and Chrome clients, and the answer without one is 400
 *   `{"error": "invalid_request", "error_description": "client_secret is missing."}`
 *   (googleapis/google-api-dotnet-client#1827, openid/AppAuth-JS#91,
 *   taylorwilsdon/google_workspace_mcp#1008 for a Desktop client); a wrong one is 401
 *   `invalid_client`. Refreshing wants it too (native-app page, "Refreshing an access token").
 * - It does not know the `offline_access` scope: the authorization request ends on Google's own
 *   "Error 400: invalid_scope" page ("Some requested scopes were invalid. {valid=[...],
 *   invalid=[offline_access]}"), never back at the app (lukaszraczylo/traefikoidc#44,
 *   akuity/kargo#3005).
 * - A refresh token comes only with `access_type=offline`, at the first consent or again with
 *   `prompt=consent` (developers.google.com/identity/openid-connect/openid-connect,
 *   "Authentication URI parameters": access_type, prompt; the web-server page, "Offline access").
 * - `hd` in the request only preselects the domain; the ID token carries the `hd` claim when the
 *   account belongs to a Google Workspace (Cloud) organisation, and the relying party must check
 *   it (same page, "hd" and "Validating an ID token"; oauth2-proxy/oauth2-proxy#2363).
 * - The ID token has `azp` equal to the client id, `email` and `email_verified` (a boolean) with
 *   the email scope (same page, "An ID token's payload").
 */
import {
  emailClaims,
  FakeIdp,
  isLoopbackRedirect,
  json,
  page,
  type FakeAccount,
  type Grant,
} from './fake-idp.ts';

export const GOOGLE_DESKTOP_CLIENT = '1234567890-desktop.apps.googleusercontent.com';
export const GOOGLE_DESKTOP_SECRET = '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';
/** A "Web application" client: no loopback redirects. */
export const GOOGLE_WEB_CLIENT = '1234567890-web.apps.googleusercontent.com';

/** The scopes Google knows among those an OpenID sign-in asks (openid-connect page, "scope"). */
const KNOWN_SCOPES = ['openid', 'email', 'profile'];

export async function startFakeGoogle(
  accounts: Record<string, FakeAccount>,
  options: { idTokenTtlSec?: number } = {},
): Promise<FakeIdp> {
  /** Who has consented to the desktop client already (a second sign-in gets no new refresh token). */
  const consented = new Set<string>();
  return FakeIdp.start(
    {
      authorize(params) {
        const client = params.get('client_id');
        if (client !== GOOGLE_DESKTOP_CLIENT && client !== GOOGLE_WEB_CLIENT)
          return page(401, 'Error 401: invalid_client. The OAuth client was not found.');
        if (client === GOOGLE_WEB_CLIENT || !isLoopbackRedirect(params.get('redirect_uri') ?? ''))
          return page(
            400,
            "Error 400: redirect_uri_mismatch. You can't sign in to this app because it doesn't comply with Google's OAuth 2.0 policy.",
          );
        const scopes = (params.get('scope') ?? '').split(' ').filter(Boolean);
        const invalid = scopes.filter((s) => !KNOWN_SCOPES.includes(s));
        if (invalid.length > 0)
          return page(
            400,
            `Error 400: invalid_scope. Some requested scopes were invalid. {valid=[${scopes
              .filter((s) => KNOWN_SCOPES.includes(s))
              .join(', ')}], invalid=[${invalid.join(', ')}]}`,
          );
        return null;
      },
      clientAuth(form) {
        if (form.get('client_id') !== GOOGLE_DESKTOP_CLIENT)
          return json(401, { error: 'invalid_client', error_description: 'Unauthorized' });
        const secret = form.get('client_secret');
        if (secret === null)
          return json(400, {
            error: 'invalid_request',
            error_description: 'client_secret is missing.',
          });
        if (secret !== GOOGLE_DESKTOP_SECRET)
          return json(401, { error: 'invalid_client', error_description: 'Unauthorized' });
        return null;
      },
      refreshToken(grant: Grant) {
        if (grant.params.get('access_type') !== 'offline') return false;
        const first = !consented.has(grant.account.sub);
        consented.add(grant.account.sub);
        return first || grant.params.get('prompt') === 'consent';
      },
      claims(grant: Grant) {
        const { account } = grant;
        return {
          azp: grant.clientId,
          ...emailClaims(grant),
          ...account.claims,
        };
      },
    },
    {
      paths: {
        issuer: '',
        authorize: '/o/oauth2/v2/auth',
        token: '/token',
        jwks: '/oauth2/v3/certs',
      },
      accounts,
      ...options,
    },
  );
}
