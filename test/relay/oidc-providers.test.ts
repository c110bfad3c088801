import { beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { silentLogger } from '../../src-shared/process/log.ts';
import { RELAY_ERRCODE } from '../../src-shared/relay/relay-protocol.ts';
import { parseConfig, type OidcConfig } from '../../src-relay/config.ts';
import { OidcVerifier } from '../../src-relay/users/oidc.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

// Issue 34 item 4: the ID tokens each provider family issues, built from its own documents, signed
// by a local key and checked by the relay's real verification (OidcVerifier: discovery, JWKS,
// jose, the claim rules, the mapping). The provider's far side (discovery document and JWKS) is a
// fake fetch; time is a fake clock. Sources of each claim set: docs/relay-protocol.md 2.3.

const NOW_SEC = Math.floor(Date.UTC(2026, 10, 22, 9, 0, 0) / 1000);
let key: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let jwk: Record<string, unknown>;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  key = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
});

/** The provider's side of the wire: its discovery document and its JWKS. */
function providerFetch(issuer: string): typeof fetch {
  const base = issuer.replace(/\/+$/, '');
  return (async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url === `${base}/.well-known/openid-configuration`)
      return Response.json({ issuer, jwks_uri: `${base}/keys` });
    if (url === `${base}/keys`) return Response.json({ keys: [jwk] });
    return new Response('not found', { status: 404 });
  }) as typeof fetch;
}

function sign(claims: JWTPayload, typ = 'JWT'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1', typ }).sign(key);
}

/** A verifier for one tenant, configured as an administrator would write it (parsed). */
function verifier(oidc: Record<string, unknown>, clock = new FakeClock()) {
  const config = parseConfig({
    tenants: {
      acme: {
        baseUrl: 'https://acme.example.com',
        access: 'users',
        secrets: ['s'],
        oidc: { scopes: ['openid', 'email'], ...oidc },
      },
    },
    users: { file: '/nonexistent/users.json' },
  });
  const tenant = config.tenants.acme!.oidc! as OidcConfig;
  const v = new OidcVerifier({
    tenant: 'acme',
    config: tenant,
    users: null,
    clock,
    logger: silentLogger,
    fetch: providerFetch(tenant.issuer),
    maxTokenAgeMs: config.clients.authMaxAgeMs,
  });
  return { v, clock };
}

const MAPPED = { extensions: ['101'], dids: [] };

async function verdict(v: OidcVerifier, token: string) {
  const answer = await v.identify(token);
  return answer.ok
    ? { ok: true, user: answer.identity.user }
    : { ok: false, status: answer.status, errcode: answer.errcode, reason: answer.reason };
}

describe('Microsoft Entra ID (v2 ID token: no email_verified; xms_edov vouches for email)', () => {
  // Microsoft identity platform, "ID token claims reference" and "optional claims reference": a
  // v2 ID token has one aud (the client id), no azp, tid/oid/preferred_username; email only when
  // the mail attribute is set and asked for; xms_edov (a boolean) only as an optional claim.
  const tid = '9188040d-6c67-4c5b-b112-36a304b66dad';
  const clientId = '6cb04018-a3f5-46a7-b995-940c78f5aef3';
  const issuer = `https://login.microsoftonline.com/${tid}/v2.0`;
  const entra = (extra: JWTPayload = {}) =>
    sign({
      ver: '2.0',
      iss: issuer,
      sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      aud: clientId,
      exp: NOW_SEC + 3600,
      iat: NOW_SEC,
      nbf: NOW_SEC,
      name: 'Abe Lincoln',
      preferred_username: 'AbeLi@microsoft.com',
      oid: '00000000-0000-0000-66f3-3332eca7ea81',
      tid,
      email: 'abe@example.org',
      ...extra,
    });

  it('admits email only with xms_edov true, and refuses it absent, false or as text', async () => {
    const { v } = verifier({ issuer, clientId, users: { 'abe@example.org': MAPPED } });
    expect(await verdict(v, await entra({ xms_edov: true }))).toEqual({
      ok: true,
      user: 'abe@example.org',
    });
    for (const xms_edov of [undefined, false, 'true', 1])
      expect(await verdict(v, await entra({ xms_edov })), String(xms_edov)).toMatchObject({
        ok: false,
        status: 403,
        errcode: RELAY_ERRCODE.notMapped,
        reason: expect.stringContaining('xms_edov'),
      });
  });

  it('admits preferred_username as the address with nothing vouching for it, and pins the tenant (tid)', async () => {
    const { v } = verifier({
      issuer,
      clientId,
      emailClaim: 'preferred_username',
      requiredClaims: { tid },
      users: { 'abeli@microsoft.com': MAPPED },
    });
    expect(await verdict(v, await entra())).toEqual({ ok: true, user: 'abeli@microsoft.com' });
    // A guest's token issued by another tenant's directory for the same app is not ours.
    expect(
      await verdict(v, await entra({ tid: '72f988bf-86f1-41af-91ab-2d7cd011db47' })),
    ).toMatchObject({ ok: false, status: 403, reason: expect.stringContaining('claim tid') });
  });
});

describe('Keycloak (payload typ "ID"; email_verified false for LDAP users without Trust Email)', () => {
  // Keycloak's ID token: typ "ID", azp the client, email_verified with the email scope; its
  // access token: typ "Bearer", aud a list (account, ...), a scope claim.
  const issuer = 'https://sso.example.org/realms/acme';
  const keycloak = (extra: JWTPayload = {}) =>
    sign({
      exp: NOW_SEC + 300,
      iat: NOW_SEC,
      auth_time: NOW_SEC,
      jti: '8d2c1f0e-5b9a-4f4e-9d1a-0a0b0c0d0e0f',
      iss: issuer,
      aud: 'screenpop',
      sub: 'f:5c1e:alice',
      typ: 'ID',
      azp: 'screenpop',
      sid: '0d8f7c54-2a44-4a69-9b52-2b1b2c3d4e5f',
      at_hash: 'x1Ug9a3HPFx0vU0lRd7b5A',
      email_verified: true,
      preferred_username: 'alice',
      email: 'alice@example.org',
      ...extra,
    });

  it('admits its ID token and refuses its access token, an unverified and an unsaid address', async () => {
    const { v } = verifier({
      issuer,
      clientId: 'screenpop',
      users: { 'alice@example.org': MAPPED },
    });
    expect(await verdict(v, await keycloak())).toEqual({ ok: true, user: 'alice@example.org' });
    const access = await keycloak({
      typ: 'Bearer',
      aud: ['screenpop', 'account'],
      scope: 'openid email profile',
      realm_access: { roles: ['default-roles-acme'] },
    });
    expect(await verdict(v, access)).toMatchObject({ ok: false, status: 401 });
    for (const email_verified of [false, undefined])
      expect(
        await verdict(v, await keycloak({ email_verified })),
        String(email_verified),
      ).toMatchObject({
        ok: false,
        status: 403,
        reason: expect.stringContaining('email_verified'),
      });
  });
});

describe('Google (hd pins the Workspace organisation)', () => {
  // Google's "Authenticate with a backend server": iss accounts.google.com, aud and azp the client
  // id, email_verified, hd only for a Workspace account (absent for gmail.com).
  const issuer = 'https://accounts.google.com';
  const clientId = '1234987819200-okd.apps.googleusercontent.com';
  const google = (extra: JWTPayload = {}) =>
    sign({
      iss: issuer,
      azp: clientId,
      aud: clientId,
      sub: '110169484474386276334',
      hd: 'example.org',
      email: 'alice@example.org',
      email_verified: true,
      at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q',
      iat: NOW_SEC,
      exp: NOW_SEC + 3600,
      ...extra,
    });

  it('admits the organisation’s account and refuses a private or another organisation’s one', async () => {
    const { v } = verifier({
      issuer,
      clientId,
      clientSecret: 'GOCSPX-desktop-app-secret', // Google wants its Desktop client's secret
      requiredClaims: { hd: 'example.org' },
      users: { 'alice@example.org': MAPPED, 'alice@gmail.com': MAPPED },
    });
    expect(await verdict(v, await google())).toEqual({ ok: true, user: 'alice@example.org' });
    const privateAccount = await google({ hd: undefined, email: 'alice@gmail.com' });
    expect(await verdict(v, privateAccount)).toMatchObject({
      ok: false,
      status: 403,
      reason: expect.stringContaining('claim hd'),
    });
    expect(await verdict(v, await google({ hd: 'other.example' }))).toMatchObject({
      ok: false,
      status: 403,
    });
  });
});

describe('Auth0 (ID tokens valid 10 hours)', () => {
  // Auth0, "Get ID Tokens": an ID token is valid 36000 s (10 h) by default.
  const issuer = 'https://acme.eu.auth0.com/';
  const clientId = 'AITXs1ZBVx2Ndg7t2rhBhwoyxqnDsPLe';
  const auth0 = (extra: JWTPayload = {}) =>
    sign({
      nickname: 'alice',
      name: 'alice@example.org',
      updated_at: '2026-11-22T08:59:00.000Z',
      email: 'alice@example.org',
      email_verified: true,
      iss: issuer,
      aud: clientId,
      sub: 'auth0|6380c3f4a2b1c0d9e8f7a6b5',
      iat: NOW_SEC,
      exp: NOW_SEC + 36_000,
      sid: 'pQHJpbVSx4kbvC3eJ4Mm0bSDQbY2QeRC',
      ...extra,
    });

  it('admits a token for the relay’s maximum age after it was issued, not for its 10 hours', async () => {
    const { v, clock } = verifier({ issuer, clientId, users: { 'alice@example.org': MAPPED } });
    const token = await auth0();
    const first = await v.identify(token);
    expect(first.ok && first.identity.expiresAt).toBe((NOW_SEC + 3600) * 1000);
    await clock.advance(59 * 60_000);
    expect(await verdict(v, token)).toMatchObject({ ok: true });
    // An hour on, 9 hours before its exp: a reconnect with it is refused (the desktop renews it
    // at Auth0, which refuses a user disabled there).
    await clock.advance(2 * 60_000);
    expect(await verdict(v, token)).toMatchObject({
      ok: false,
      status: 401,
      errcode: RELAY_ERRCODE.signInRequired,
    });
    // A renewed token (issued now) is admitted.
    const renewedAt = NOW_SEC + 61 * 60;
    expect(
      await verdict(v, await auth0({ iat: renewedAt, exp: renewedAt + 36_000 })),
    ).toMatchObject({ ok: true });
  });
});

describe('the relay’s config of the claim rules', () => {
  it('takes email_verifiedClaim null (nothing vouches) and refuses a mapping of one address twice', async () => {
    const issuer = 'https://idp.example.org';
    const { v } = verifier({
      issuer,
      clientId: 'c',
      emailVerifiedClaim: null,
      users: { 'bob@example.org': MAPPED },
    });
    const token = await sign({
      iss: issuer,
      aud: 'c',
      sub: 'b',
      iat: NOW_SEC,
      exp: NOW_SEC + 60,
      email: 'bob@example.org',
    });
    expect(await verdict(v, token)).toMatchObject({ ok: true });
    expect(() =>
      verifier({
        issuer,
        clientId: 'c',
        users: { 'Bob@Example.org': MAPPED, 'bob@EXAMPLE.org': MAPPED },
      }),
    ).toThrow(/maps "Bob@Example.org" and "bob@EXAMPLE.org", which are one address/);
    expect(() =>
      verifier({ issuer, clientId: 'c', users: { '\u212Aate@example.org': MAPPED } }),
    ).toThrow(/not an e-mail address the relay compares/);
  });
});
