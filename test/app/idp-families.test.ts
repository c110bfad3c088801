/**
 * Organisation sign-in against each identity-provider family as it really behaves (the fakes in
 * test/support/idp-families/, every behaviour cited there to its source): Google (a Desktop app
 * client's secret, no offline_access, access_type=offline for a refresh token, the hd claim),
 * Okta (the redirect address matched exactly, port included), Entra ID (the tenant's v2.0
 * issuer works; /common and /organizations publish a {tenantid} template), Keycloak (payload
 * `typ` "ID", 5-minute tokens, LDAP users' unverified addresses, exact redirect addresses) and
 * Auth0 (an issuer with a trailing slash, 10-hour ID tokens, exact callback addresses). Each goes end to end
 * through what Settings uses: the relay's config (parsed as the relay parses it), GET
 * /v1/org/<tenant>, OrganisationAccount.signIn in the "system browser", then Test connection,
 * where the relay checks the ID token against the fake's JWKS and names the user. The standard
 * flow stays tested against oidc-provider (organisation-mode.test.ts).
 */
import { join } from 'node:path';
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { systemClock } from '../../src-shared/process/clock.ts';
import { english } from '../../src-shared/i18n/phrase.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { parseConfig } from '../../src-relay/config.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { OrganisationAccount, OrgAccountError } from '../../src-main/core/org/org-account.ts';
import {
  orgKeychainAccount,
  parseOrgCredential,
} from '../../src-main/core/org/org-token-source.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { relayConfig, SECRET } from '../../rigs/relay/helpers.ts';
import { startOrgRelay } from '../../rigs/relay/users-support.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { freePort, type BrowserResult, type FakeIdp } from '../support/idp-families/fake-idp.ts';
import {
  GOOGLE_DESKTOP_CLIENT,
  GOOGLE_DESKTOP_SECRET,
  startFakeGoogle,
} from '../support/idp-families/google.ts';
import { OKTA_NATIVE_CLIENT, startFakeOkta } from '../support/idp-families/okta.ts';
import { ENTRA_CLIENT, ENTRA_TENANT, startFakeEntra } from '../support/idp-families/entra.ts';
import {
  KEYCLOAK_CLIENT,
  KEYCLOAK_TOKEN_TTL_SEC,
  startFakeKeycloak,
} from '../support/idp-families/keycloak.ts';
import {
  AUTH0_CLIENT,
  AUTH0_ID_TOKEN_TTL_SEC,
  startFakeAuth0,
} from '../support/idp-families/auth0.ts';

const tmp = useTempDir('idp-families-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ALICE = { sub: '110169484474386276334', email: 'alice@example.org' };

/** The relay with `oidc` for tenant acme (alice is a user by her address), and the app's account. */
async function orgWith(idp: FakeIdp, oidc: Record<string, unknown>, person = 'alice') {
  const config = relayConfig(
    {
      acme: {
        baseUrl: 'http://127.0.0.1:9/acme',
        secrets: [SECRET],
        access: 'users',
        oidc: { clockToleranceSec: 5, ...oidc },
      } as never,
    },
    { users: { file: join(tmp.path, `users-${cleanups.length}.json`) } },
  );
  const org = await startOrgRelay(config);
  cleanups.push(() => org.close());
  await org.users.addUser(
    { tenant: 'acme', name: 'alice', extensions: ['101'], dids: [], email: 'alice@example.org' },
    Date.now(),
  );
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const keychain = new MemoryCredentialStore();
  const visits: Promise<BrowserResult>[] = [];
  const deps = {
    store: keychain,
    clock: systemClock,
    logger,
    secrets,
    network: (s: Settings) => transportFor(s, { logger, secrets, readFile: () => '' }),
    openBrowser: async (url: string) => {
      visits.push(idp.browser(url, person));
    },
    deviceLabel: 'Screenpop on test-pc',
    signInTimeoutMs: 10_000,
    testTimeoutMs: 10_000,
  };
  const account = new OrganisationAccount(deps);
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    connectionMode: 'organisation',
    relayUrl: org.relay.url.replace(/^http/, 'ws'),
    relayTenant: 'acme',
  };
  const stored = async () =>
    parseOrgCredential(await keychain.getSecret(orgKeychainAccount(settings.relayUrl, 'acme')));
  /** The app started again on this computer (the same keychain). */
  const restarted = () => new OrganisationAccount(deps);
  return { account, settings, visits, logger, secrets, stored, restarted };
}

/** Signs in while the provider shows an error page instead of coming back: the person gives up. */
async function refusedAtProvider(t: Awaited<ReturnType<typeof orgWith>>) {
  const signing = t.account.signIn(t.settings).catch((e: unknown) => e);
  while (t.visits.length === 0) await new Promise((r) => setTimeout(r, 10));
  const visit = await t.visits[0]!;
  t.account.cancel();
  return { visit, outcome: await signing };
}

describe('Google (a Desktop app client)', () => {
  const googleConfig = (google: FakeIdp, extra: Record<string, unknown> = {}) => ({
    issuer: google.issuer,
    clientId: GOOGLE_DESKTOP_CLIENT,
    clientSecret: GOOGLE_DESKTOP_SECRET,
    scopes: ['openid', 'email', 'profile'],
    authorizationParams: { access_type: 'offline', prompt: 'consent', hd: 'example.org' },
    requiredClaims: { hd: 'example.org' },
    ...extra,
  });

  it('signs in with the client secret, without offline_access, with access_type=offline: a refresh token, the hd claim, the relay names alice; the secret is sent to the token endpoint only and never logged', async () => {
    const google = await startFakeGoogle({
      alice: { ...ALICE, claims: { hd: 'example.org' } },
    });
    cleanups.push(() => google.close());
    const t = await orgWith(google, googleConfig(google));

    expect(await t.account.signIn(t.settings)).toEqual({ via: 'oidc', email: 'alice@example.org' });
    expect((await t.visits[0])?.appPage).toBeDefined();
    const asked = google.authorizeRequests[0]!;
    expect(asked.get('scope')).toBe('openid email profile');
    expect(asked.get('access_type')).toBe('offline');
    expect(asked.get('hd')).toBe('example.org');
    expect(asked.get('client_secret')).toBeNull();
    expect(new URL(asked.get('redirect_uri')!).hostname).toBe('127.0.0.1');
    expect(google.tokenRequests[0]!.get('client_secret')).toBe(GOOGLE_DESKTOP_SECRET);
    const kept = await t.stored();
    expect(kept).toMatchObject({ kind: 'oidc', refreshToken: expect.any(String) });

    const test = await t.account.test(t.settings);
    expect(test).toMatchObject({ ok: true, identity: { user: 'alice', via: 'oidc' } });

    // A refresh (after a restart of the app) sends the secret again, as Google wants.
    const token = await t.restarted().tokens(t.settings).getToken();
    expect(decodeJwt(token.value)).toMatchObject({ hd: 'example.org', azp: GOOGLE_DESKTOP_CLIENT });
    expect(google.tokenRequests[1]!.get('grant_type')).toBe('refresh_token');
    expect(google.tokenRequests[1]!.get('client_secret')).toBe(GOOGLE_DESKTOP_SECRET);

    expect(t.secrets.scrub(`x ${GOOGLE_DESKTOP_SECRET} x`)).not.toContain(GOOGLE_DESKTOP_SECRET);
    expect(JSON.stringify(t.logger.records)).not.toContain(GOOGLE_DESKTOP_SECRET);
  });

  it('without access_type=offline Google gives no refresh token: the person is signed in (also after a restart) until the ID token ends, then asked to sign in again', async () => {
    const google = await startFakeGoogle({
      alice: { ...ALICE, claims: { hd: 'example.org' } },
    });
    cleanups.push(() => google.close());
    const t = await orgWith(
      google,
      googleConfig(google, { authorizationParams: { hd: 'example.org' } }),
    );

    expect(await t.account.signIn(t.settings)).toEqual({ via: 'oidc', email: 'alice@example.org' });
    const kept = await t.stored();
    expect(kept).toMatchObject({ refreshToken: null, idToken: { value: expect.any(String) } });
    expect(await t.account.test(t.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice' },
    });
    const first = await t.restarted().tokens(t.settings).getToken();
    expect(first.value).toBe(kept?.kind === 'oidc' ? kept.idToken?.value : undefined);
    expect(JSON.stringify(t.logger.records)).toContain('gave no refresh token');

    // An ID token about to end (within the renewal margin): nothing to renew with.
    google.idTokenTtlSec = 30;
    await t.account.signIn(t.settings);
    const ended = await t.account
      .tokens(t.settings)
      .getToken()
      .catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(ServiceError);
    expect((ended as ServiceError).fault).toBe('sign-in-expired');
    expect(google.tokenRequests.every((f) => f.get('grant_type') === 'authorization_code')).toBe(
      true,
    );
  });

  it('asked the standard way Google refuses (offline_access: its invalid_scope page; no secret: "client_secret is missing."), and the relay says what Google needs when it starts', async () => {
    const google = await startFakeGoogle({ alice: { ...ALICE, claims: { hd: 'example.org' } } });
    cleanups.push(() => google.close());

    const standard = await orgWith(google, {
      issuer: google.issuer,
      clientId: GOOGLE_DESKTOP_CLIENT,
    });
    const { visit, outcome } = await refusedAtProvider(standard);
    expect(visit.refused?.status).toBe(400);
    expect(visit.refused?.text).toContain('invalid_scope');
    expect(visit.refused?.text).toContain('invalid=[offline_access]');
    expect(outcome).toBeInstanceOf(OrgAccountError);

    const noSecret = await orgWith(google, googleConfig(google, { clientSecret: undefined }));
    const failed = await noSecret.account.signIn(noSecret.settings).catch((e: unknown) => e);
    expect(english((failed as OrgAccountError).failure.reason)).toContain('could not be used');
    expect(
      JSON.stringify((failed as Error).cause && ((failed as Error).cause as Error).cause),
    ).toContain('client_secret is missing.');

    // The real issuer: what Google needs is said before anyone tries.
    const config = (oidc: Record<string, unknown>) => () =>
      parseConfig({
        users: { file: join(tmp.path, 'users.json') },
        tenants: {
          acme: {
            baseUrl: 'https://acme.pbx.example',
            secrets: ['s'],
            access: 'users',
            oidc: {
              issuer: 'https://accounts.google.com',
              clientId: GOOGLE_DESKTOP_CLIENT,
              ...oidc,
            },
          },
        },
      });
    expect(config({})).toThrow(/offline_access[^]*access_type[^]*clientSecret[^]*"hd"/);
    expect(
      config({
        clientSecret: 'GOCSPX-x',
        scopes: ['openid', 'email'],
        authorizationParams: { access_type: 'offline' },
        requiredClaims: { hd: 'example.org' },
      }),
    ).not.toThrow();
    expect(config({ authorizationParams: { redirect_uri: 'https://evil.example/' } })).toThrow(
      /authorizationParams.redirect_uri[^]*the app sets/,
    );
  });
  it('a private Google account or another Workspace (hd other than the organisation’s) signs in at Google and is refused by the relay as not the organisation’s account', async () => {
    const google = await startFakeGoogle({
      alice: { ...ALICE, claims: { hd: 'other.example' } },
    });
    cleanups.push(() => google.close());
    const t = await orgWith(google, googleConfig(google));
    await t.account.signIn(t.settings);
    const test = await t.account.test(t.settings);
    // Not "no extension assigned, ask your administrator": another account is the remedy.
    expect(test).toMatchObject({
      ok: false,
      failure: {
        reason: [{ id: 'status.fault.other-account.reason' }],
        remedy: [{ id: 'status.fault.other-account.remedy' }],
      },
    });
  });
});

describe('Okta (the redirect address matched exactly)', () => {
  it('a random loopback port is refused on Okta’s page; with oidc.redirectPort the registered address comes back and the sign-in works, on 127.0.0.1 or localhost', async () => {
    const port = await freePort();
    const okta = await startFakeOkta({ alice: ALICE }, [
      `http://127.0.0.1:${port}/callback`,
      `http://localhost:${port}/callback`,
    ]);
    cleanups.push(() => okta.close());
    const base = { issuer: okta.issuer, clientId: OKTA_NATIVE_CLIENT };

    const random = await orgWith(okta, base);
    const { visit } = await refusedAtProvider(random);
    expect(visit.refused?.status).toBe(400);
    expect(visit.refused?.text).toContain(
      "The 'redirect_uri' parameter must be a Login redirect URI in the client app settings",
    );

    const fixed = await orgWith(okta, { ...base, redirectPort: port });
    expect(await fixed.account.signIn(fixed.settings)).toEqual({
      via: 'oidc',
      email: 'alice@example.org',
    });
    expect((await fixed.visits[0])?.redirect?.origin).toBe(`http://127.0.0.1:${port}`);
    expect(await fixed.stored()).toMatchObject({ refreshToken: expect.any(String) });
    expect(await fixed.account.test(fixed.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice' },
    });

    const named = await orgWith(okta, { ...base, redirectPort: port, redirectHost: 'localhost' });
    expect(await named.account.signIn(named.settings)).toMatchObject({ via: 'oidc' });
    expect((await named.visits[0])?.redirect?.origin).toBe(`http://localhost:${port}`);
  });

  it('the fixed port taken by another program: the sign-in says which address and which setting, opens no browser and keeps nothing', async () => {
    const port = await freePort();
    const okta = await startFakeOkta({ alice: ALICE }, [`http://127.0.0.1:${port}/callback`]);
    cleanups.push(() => okta.close());
    const squatter = http.createServer((_req, res) => res.end('another program'));
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => squatter.close(() => resolve())));

    const t = await orgWith(okta, {
      issuer: okta.issuer,
      clientId: OKTA_NATIVE_CLIENT,
      redirectPort: port,
    });
    const failed = await t.account.signIn(t.settings).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OrgAccountError);
    const { reason, remedy } = (failed as OrgAccountError).failure;
    expect(english(reason)).toBe(
      `Another program on this computer is using 127.0.0.1:${port}, the address your organisation’s sign-in comes back to.`,
    );
    expect(english(remedy)).toContain(`Close the program using port ${port}`);
    expect(english(remedy)).toContain('oidc.redirectPort');
    expect(t.visits).toHaveLength(0);
    expect(await t.stored()).toBeNull();
  });
});

describe('Entra ID', () => {
  it('/common and /organizations publish the {tenantid} template: the relay refuses them at start and says to use the tenant’s issuer', async () => {
    const entra = await startFakeEntra({ alice: ALICE });
    cleanups.push(() => entra.close());
    const common = (await (
      await fetch(`${entra.origin}/common/v2.0/.well-known/openid-configuration`)
    ).json()) as { issuer: string };
    expect(common.issuer).toBe(`${entra.origin}/{tenantid}/v2.0`);

    for (const issuer of [
      `${entra.origin}/common/v2.0`,
      `${entra.origin}/organizations/v2.0`,
      'https://login.microsoftonline.com/common/v2.0',
      'https://login.microsoftonline.com/organizations',
      'https://login.microsoftonline.com/{tenantid}/v2.0',
    ])
      expect(() =>
        relayConfig(
          {
            acme: {
              baseUrl: 'https://acme.pbx.example',
              secrets: ['s'],
              access: 'users',
              oidc: { issuer, clientId: ENTRA_CLIENT },
            },
          },
          { users: { file: join(tmp.path, 'users.json') } },
        ),
      ).toThrow(
        /\{tenantid\}[^]*Use your tenant's issuer, https:\/\/login\.microsoftonline\.com\/<tenant id>\/v2\.0[^]*one relay tenant per Entra tenant/,
      );
  });

  it('the tenant’s v2.0 issuer: a sign-in on any loopback port, the ID token without email_verified, mapped by preferred_username, tid required', async () => {
    const entra = await startFakeEntra({
      alice: {
        sub: '00000000-0000-0000-66f3-3332eca7ea81',
        claims: { preferred_username: 'alice@example.org', name: 'Alice' },
      },
    });
    cleanups.push(() => entra.close());
    const t = await orgWith(entra, {
      issuer: entra.issuer,
      clientId: ENTRA_CLIENT,
      emailClaim: 'preferred_username',
      requiredClaims: { tid: ENTRA_TENANT },
    });
    // The address Settings shows comes from the relay's claim (was null: no email claim).
    expect(await t.account.signIn(t.settings)).toEqual({ via: 'oidc', email: 'alice@example.org' });
    expect(await t.account.test(t.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice', via: 'oidc', extensions: ['101'] },
    });
    const claims = decodeJwt((await t.account.tokens(t.settings).getToken()).value);
    expect(claims).toMatchObject({ iss: entra.issuer, tid: ENTRA_TENANT });
    expect(claims).not.toHaveProperty('email_verified');
    expect(claims).not.toHaveProperty('email');
  });

  it('a user of another Entra tenant (same app, another tid) signs in at the provider and is refused by the relay as not the organisation’s account', async () => {
    const entra = await startFakeEntra({
      alice: {
        sub: 'oid-alice',
        claims: {
          preferred_username: 'alice@example.org',
          tid: 'aaaaaaaa-0000-0000-0000-000000000001',
        },
      },
    });
    cleanups.push(() => entra.close());
    const t = await orgWith(entra, {
      issuer: entra.issuer,
      clientId: ENTRA_CLIENT,
      emailClaim: 'preferred_username',
      requiredClaims: { tid: ENTRA_TENANT },
    });
    await t.account.signIn(t.settings);
    const test = await t.account.test(t.settings);
    // Not "no extension assigned, ask your administrator": another account is the remedy.
    expect(test).toMatchObject({
      ok: false,
      failure: {
        reason: [{ id: 'status.fault.other-account.reason' }],
        remedy: [{ id: 'status.fault.other-account.remedy' }],
      },
    });
  });

  it('without offline_access Entra gives no refresh token: the sign-in is kept (not refused) and the relay names alice', async () => {
    const entra = await startFakeEntra({
      alice: { sub: 'oid-alice', claims: { preferred_username: 'alice@example.org' } },
    });
    cleanups.push(() => entra.close());
    const t = await orgWith(entra, {
      issuer: entra.issuer,
      clientId: ENTRA_CLIENT,
      scopes: ['openid', 'profile', 'email'],
      emailClaim: 'preferred_username',
    });
    const outcome = await t.account.signIn(t.settings).catch((e: unknown) => e);
    expect(outcome).toEqual({ via: 'oidc', email: 'alice@example.org' });
    expect(await t.stored()).toMatchObject({ refreshToken: null });
    expect(await t.account.test(t.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice' },
    });
  });
});

describe('Keycloak (a public client of a realm)', () => {
  it('a random port ends on Keycloak’s page; with oidc.redirectPort the sign-in works: its ID token (payload typ "ID", 5 minutes) admitted, a refresh token kept', async () => {
    const port = await freePort();
    const keycloak = await startFakeKeycloak({ alice: { ...ALICE, sub: 'alice' } }, [
      `http://127.0.0.1:${port}/callback`,
    ]);
    cleanups.push(() => keycloak.close());
    const base = {
      issuer: keycloak.issuer,
      clientId: KEYCLOAK_CLIENT,
      scopes: ['openid', 'email', 'profile'],
    };
    expect(keycloak.issuer).toMatch(/\/realms\/acme$/);

    const random = await orgWith(keycloak, base);
    const { visit } = await refusedAtProvider(random);
    expect(visit.refused).toMatchObject({ status: 400 });
    expect(visit.refused?.text).toContain('Invalid parameter: redirect_uri');

    const t = await orgWith(keycloak, { ...base, redirectPort: port });
    expect(await t.account.signIn(t.settings)).toEqual({ via: 'oidc', email: 'alice@example.org' });
    expect(await t.stored()).toMatchObject({ refreshToken: expect.any(String) });
    const claims = decodeJwt((await t.account.tokens(t.settings).getToken()).value);
    expect(claims).toMatchObject({ typ: 'ID', azp: KEYCLOAK_CLIENT, email_verified: true });
    expect(claims.exp! - claims.iat!).toBe(KEYCLOAK_TOKEN_TTL_SEC);
    expect(await t.account.test(t.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice', via: 'oidc' },
    });
  });

  it('a user from LDAP without "Trust Email" (email_verified false) signs in at Keycloak and is refused by the relay; with emailVerifiedClaim null the administrator vouches and alice is admitted', async () => {
    const port = await freePort();
    const keycloak = await startFakeKeycloak(
      { alice: { ...ALICE, sub: 'alice', ldapUntrusted: true } },
      [`http://127.0.0.1:${port}/*`],
    );
    cleanups.push(() => keycloak.close());
    const base = {
      issuer: keycloak.issuer,
      clientId: KEYCLOAK_CLIENT,
      scopes: ['openid', 'email'],
      redirectPort: port,
    };
    const refused = await orgWith(keycloak, base);
    await refused.account.signIn(refused.settings);
    expect(await refused.account.test(refused.settings)).toMatchObject({ ok: false });

    const trusted = await orgWith(keycloak, { ...base, emailVerifiedClaim: null });
    await trusted.account.signIn(trusted.settings);
    expect(await trusted.account.test(trusted.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice' },
    });
  });
});

describe('Auth0 (a native application)', () => {
  it('its issuer ends in a slash, kept exactly by the app and the relay; a changing port is refused on Auth0’s page; offline_access gives a refresh token; 10-hour ID tokens', async () => {
    const port = await freePort();
    const auth0 = await startFakeAuth0({ alice: ALICE }, [`http://127.0.0.1:${port}/callback`]);
    cleanups.push(() => auth0.close());
    expect(auth0.issuer.endsWith('/')).toBe(true);
    const base = {
      issuer: auth0.issuer,
      clientId: AUTH0_CLIENT,
      scopes: ['openid', 'email', 'offline_access'],
    };

    const random = await orgWith(auth0, base);
    const { visit } = await refusedAtProvider(random);
    expect(visit.refused?.text).toContain('is not in the list of allowed callback URLs');

    const t = await orgWith(auth0, { ...base, redirectPort: port });
    expect(await t.account.signIn(t.settings)).toEqual({ via: 'oidc', email: 'alice@example.org' });
    expect(await t.stored()).toMatchObject({ refreshToken: expect.any(String) });
    const claims = decodeJwt((await t.account.tokens(t.settings).getToken()).value);
    expect(claims.iss).toBe(auth0.issuer);
    expect(claims.exp! - claims.iat!).toBe(AUTH0_ID_TOKEN_TTL_SEC);
    expect(await t.account.test(t.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice', via: 'oidc' },
    });
    // A refresh after a restart of the app goes to /oauth/token without a secret.
    await t.restarted().tokens(t.settings).getToken();
    const refresh = auth0.tokenRequests.find((f) => f.get('grant_type') === 'refresh_token');
    expect(refresh?.get('client_secret')).toBeNull();
  });

  it('without offline_access Auth0 gives no refresh token: the sign-in is kept until its ID token ends', async () => {
    const port = await freePort();
    const auth0 = await startFakeAuth0({ alice: ALICE }, [`http://127.0.0.1:${port}/callback`]);
    cleanups.push(() => auth0.close());
    const t = await orgWith(auth0, {
      issuer: auth0.issuer,
      clientId: AUTH0_CLIENT,
      scopes: ['openid', 'email'],
      redirectPort: port,
    });
    expect(await t.account.signIn(t.settings)).toEqual({ via: 'oidc', email: 'alice@example.org' });
    expect(await t.stored()).toMatchObject({ refreshToken: null });
    expect(await t.account.test(t.settings)).toMatchObject({
      ok: true,
      identity: { user: 'alice' },
    });
  });
});
