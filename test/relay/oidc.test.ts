import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { systemClock } from '../../src-shared/process/clock.ts';
import {
  CloseCode,
  RELAY_ERRCODE,
  relayOrgPath,
  type ControlFrame,
  type OrgSignInInfo,
} from '../../src-shared/relay/relay-protocol.ts';
import {
  refreshSignIn,
  signInWithBrowser,
  type OidcTokens,
} from '../../src-main/core/org/oidc-sign-in.ts';
import { createHash, randomBytes } from 'node:crypto';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import {
  DESKTOP_CLIENT_ID,
  OTHER_CLIENT_ID,
  startOidcProvider,
  type OidcProviderHandle,
} from '../../rigs/oidc-provider.ts';
import { useTempDir } from '../support/temp-dir.ts';
import type { RelayDeps } from '../../src-relay/server.ts';
import { usersCommand } from '../../src-relay/users/users-cli.ts';
import { TestClient } from '../../rigs/relay/helpers.ts';
import {
  ALL_KINDS,
  addUser,
  orgConfig,
  postAll,
  startOrgRelay,
  twoUsersDay,
} from '../../rigs/relay/users-support.ts';

// Single sign-on against a real OpenID provider (oidc-provider on 127.0.0.1): the desktop's own
// sign-in code (authorization code + PKCE, loopback redirect) gets the tokens; the relay checks
// them (docs/relay-protocol.md section 2.3).
const tmp = useTempDir('relay-oidc-');
const accounts = {
  alice: { email: 'alice@example.org' },
  bob: { email: 'Bob@Example.org' },
  carol: { email: 'carol@example.org' },
  dave: { email: 'dave@example.org', emailVerified: false },
  // email_verified as text: "false" is not a yes.
  erin: { email: 'erin@example.org', emailVerified: 'false' },
  // The Kelvin sign U+212A: toLowerCase() turns it into k, so this was taken for kate@example.org.
  kelvin: { email: '\u212Aate@example.org' },
  // An Entra ID user without a mail attribute: no email claim, the UPN as preferred_username.
  abe: { preferredUsername: 'abe@example.org' },
};
let idp: OidcProviderHandle;
let otherIdp: OidcProviderHandle;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  idp = await startOidcProvider({ accounts });
  // Another issuer with the same client ids and the same signing key: its tokens verify against
  // our provider's JWKS, so only the issuer check can refuse them.
  otherIdp = await startOidcProvider({ accounts, signingKey: idp.signingKey });
});
afterAll(async () => {
  await idp?.close();
  await otherIdp?.close();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function ssoRelay(
  issuer = idp.issuer,
  extra: Record<string, unknown> = {},
  deps: Pick<RelayDeps, 'directory'> = {},
) {
  const config = orgConfig(join(tmp.path, 'users.json'));
  config.tenants.acme!.oidc = {
    issuer,
    clientId: DESKTOP_CLIENT_ID,
    scopes: ['openid', 'email', 'offline_access'],
    emailClaim: 'email',
    clockToleranceSec: 0,
    users: { 'bob@example.org': { extensions: ['102'], dids: ['+49 30 555 0002'] } },
    ...extra,
  };
  const org = await startOrgRelay(config, undefined, deps);
  cleanups.push(() => org.close());
  return { ...org, config };
}

/**
 * A relay for `provider` whose sweeper looks every 500 ms (idle time-out 2 s: the client must
 * heartbeat, beating()), so a session ended at its token's expiry would be closed within 0.5 s.
 */
async function sweptRelay(provider: OidcProviderHandle, file: string, authMaxAgeMs = 3_600_000) {
  const config = orgConfig(join(tmp.path, file));
  config.clients.authMaxAgeMs = authMaxAgeMs;
  config.clients.idleTimeoutMs = 2_000;
  config.tenants.acme!.oidc = {
    issuer: provider.issuer,
    clientId: DESKTOP_CLIENT_ID,
    scopes: ['openid', 'email', 'offline_access'],
    emailClaim: 'email',
    clockToleranceSec: 0,
    users: {},
  };
  const org = await startOrgRelay(config);
  cleanups.push(org.close);
  return org;
}

/** Keeps a test client's session from going idle (a heartbeat every 500 ms). */
function beating(client: TestClient): TestClient {
  const timer = setInterval(() => client.send(JSON.stringify({ type: 'heartbeat' })), 500);
  cleanups.push(async () => clearInterval(timer));
  return client;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** The desktop's sign-in, with `provider`'s login page answered as `account`. */
async function signIn(
  info: { issuer: string; clientId: string; scopes: string[] },
  account: string,
  provider = idp,
): Promise<{ tokens: OidcTokens; page: Promise<string> }> {
  let page: Promise<string> = Promise.resolve('');
  const tokens = await signInWithBrowser(info, {
    clock: systemClock,
    fetch,
    // The system browser: opened, not waited for (it comes back to the loopback address).
    openBrowser: (url) => {
      page = provider.signIn(url, account);
    },
    page: (outcome) => `screenpop: ${outcome}`,
  });
  return { tokens, page };
}

async function orgInfo(relayUrl: string): Promise<NonNullable<OrgSignInInfo['oidc']>> {
  const info = (await (await fetch(relayUrl + relayOrgPath('acme'))).json()) as OrgSignInInfo;
  return info.oidc!;
}

/** The stream handshake's answer: 101, or the refusal's status and body. */
function handshake(
  url: string,
  token: string,
): Promise<{ status: number; errcode?: number; errmsg?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101 });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ...(JSON.parse(body) as object) }),
      );
    });
    ws.once('error', reject);
  });
}

function identity(client: TestClient) {
  return (
    client.controls.find((c) => c.type === 'ready') as Extract<ControlFrame, { type: 'ready' }>
  ).identity;
}

describe('single sign-on: the relay checks the provider’s ID token and maps the e-mail address', () => {
  it('admits users signed in through the browser (PKCE, loopback) and gives each only their own events', async () => {
    const { relay, users } = await ssoRelay();
    await addUser(users, 'alice', ['101'], ['+49 30 555 0001'], 'alice@example.org');
    const info = await orgInfo(relay.url);
    expect(info).toEqual({
      issuer: idp.issuer,
      clientId: DESKTOP_CLIENT_ID,
      scopes: ['openid', 'email', 'offline_access'],
    });
    const alice = await signIn(info, 'alice');
    expect(await alice.page).toBe('screenpop: signed-in');
    expect(alice.tokens.email).toBe('alice@example.org');
    expect(alice.tokens.refreshToken).toBeTruthy();
    const bob = await signIn(info, 'bob'); // mapped by the relay's config, whatever the case of the address
    const a = await TestClient.connect(relay.clientUrl('acme'), alice.tokens.idToken, {
      extensions: ['102'],
      events: ALL_KINDS,
    });
    const b = await TestClient.connect(relay.clientUrl('acme'), bob.tokens.idToken, {
      events: ALL_KINDS,
    });
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    expect(identity(a)).toEqual({
      user: 'alice',
      via: 'oidc',
      extensions: ['101'],
      dids: ['+49 30 555 0001'],
      expiresAt: alice.tokens.idTokenExpiresAt,
    });
    expect(identity(b)).toMatchObject({
      user: 'bob@example.org',
      via: 'oidc',
      extensions: ['102'],
    });
    const day = twoUsersDay();
    await postAll(relay.webhookUrl('acme'), day.bodies);
    await a.until(() => a.events.length >= day.alice.length);
    await b.until(() => b.events.length >= day.bob.length);
    await new Promise((r) => setTimeout(r, 200));
    expect(a.eventIds()).toEqual(day.alice);
    expect(b.eventIds()).toEqual(day.bob);
  });

  it('a relay that reads addresses from preferred_username says so to desktops, which show that address (an Entra ID user without email)', async () => {
    const { relay, users } = await ssoRelay(idp.issuer, {
      scopes: ['openid', 'profile', 'offline_access'],
      emailClaim: 'preferred_username',
      emailVerifiedClaim: null,
    });
    await addUser(users, 'abe', ['104'], [], 'abe@example.org');
    const info = await orgInfo(relay.url);
    expect(info.emailClaim).toBe('preferred_username');
    const abe = await signIn(info, 'abe');
    expect(abe.tokens.email).toBe('abe@example.org');
    const client = await TestClient.connect(relay.clientUrl('acme'), abe.tokens.idToken, {
      extensions: ['104'],
      events: ALL_KINDS,
    });
    cleanups.push(async () => client.close());
  });

  it('refuses a tampered token, one for another client, one from another issuer, an unmapped and an unverified address', async () => {
    const { relay, users } = await ssoRelay();
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    const info = await orgInfo(relay.url);
    const url = relay.clientUrl('acme');
    const { tokens } = await signIn(info, 'alice');
    expect(await handshake(url, tokens.idToken)).toEqual({ status: 101 });

    // Tampered: the payload says bob, the signature is alice's.
    const [h, p, s] = tokens.idToken.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, email: 'bob@example.org' })).toString(
      'base64url',
    );
    expect(await handshake(url, `${h}.${forged}.${s}`)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.signInRequired,
    });
    // A flipped bit in the signature.
    const flipped = s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.at(-1);
    expect(await handshake(url, `${h}.${p}.${flipped}`)).toMatchObject({ status: 401 });

    // Another application's token from the same provider (audience some-other-app).
    const other = await signIn({ ...info, clientId: OTHER_CLIENT_ID }, 'alice');
    expect(await handshake(url, other.tokens.idToken)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.signInRequired,
    });

    // Another issuer's token for the same client id and address, signed with the same key.
    const foreign = await signIn({ ...info, issuer: otherIdp.issuer }, 'alice', otherIdp);
    expect(await handshake(url, foreign.tokens.idToken)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.signInRequired,
    });

    // Signed in, but nobody gave carol an extension; dave's address is not verified.
    const carol = await signIn(info, 'carol');
    expect(await handshake(url, carol.tokens.idToken)).toMatchObject({
      status: 403,
      errcode: RELAY_ERRCODE.notMapped,
    });
    const dave = await signIn(info, 'dave');
    expect(await handshake(url, dave.tokens.idToken)).toMatchObject({
      status: 403,
      errcode: RELAY_ERRCODE.notMapped,
    });
  });

  it('keeps a session past its short token (Keycloak: 5 min), ends it at the relay’s maximum age after the token was issued (4002), then admits the renewed one only', async () => {
    const shortIdp = await startOidcProvider({ accounts, idTokenTtlSec: 1 });
    cleanups.push(() => shortIdp.close());
    const { relay, users } = await sweptRelay(shortIdp, 'users-age.json', 4_000);
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    const info = await orgInfo(relay.url);
    const { tokens } = await signIn(info, 'alice', shortIdp);
    const client = beating(await TestClient.connect(relay.clientUrl('acme'), tokens.idToken, {}));
    cleanups.push(() => client.close());
    // A second past the token's expiry the session goes on (it was verified once; the users are
    // re-checked on every change); it ends 4 s after the token was issued.
    await sleep(tokens.idTokenExpiresAt - Date.now() + 1_000);
    expect(client.closeCode).toBeNull();
    await client.until(() => client.closeCode !== null, 5_000);
    expect(client.closeCode).toBe(CloseCode.reauthenticate);
    expect(await handshake(relay.clientUrl('acme'), tokens.idToken)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.signInRequired,
      errmsg: expect.stringContaining('expired'),
    });
    const renewed = await refreshSignIn(info, tokens.refreshToken!, { fetch });
    expect(renewed.idTokenExpiresAt).toBeGreaterThan(tokens.idTokenExpiresAt);
    expect(await handshake(relay.clientUrl('acme'), renewed.idToken)).toEqual({ status: 101 });
  });

  it('ends a signed-in user’s session at once when the administrator revokes them, and refuses them after', async () => {
    const { relay, users } = await ssoRelay();
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    const { tokens } = await signIn(await orgInfo(relay.url), 'alice');
    const client = await TestClient.connect(relay.clientUrl('acme'), tokens.idToken, {});
    cleanups.push(() => client.close());
    await users.revoke('acme', 'alice', Date.now());
    await client.until(() => client.closeCode !== null, 5_000);
    expect(client.closeCode).toBe(CloseCode.revoked);
    expect(await handshake(relay.clientUrl('acme'), tokens.idToken)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.revoked,
    });
  });

  // Issue 34 item 5: a session lives past its token now, so revocation must not wait for either.
  it('ends at once a session past its token’s expiry when the user is disabled in the users file by hand, and refuses a still-valid 10-hour token', async () => {
    const shortIdp = await startOidcProvider({ accounts, idTokenTtlSec: 1 });
    const longIdp = await startOidcProvider({ accounts, idTokenTtlSec: 36_000 }); // Auth0's default
    cleanups.push(
      () => shortIdp.close(),
      () => longIdp.close(),
    );
    for (const provider of [shortIdp, longIdp]) {
      const file = `users-${provider === shortIdp ? 'short' : 'long'}.json`;
      const { relay, users } = await sweptRelay(provider, file);
      await addUser(users, 'alice', ['101'], [], 'alice@example.org');
      const { tokens } = await signIn(await orgInfo(relay.url), 'alice', provider);
      const client = beating(await TestClient.connect(relay.clientUrl('acme'), tokens.idToken, {}));
      cleanups.push(() => client.close());
      if (provider === shortIdp) {
        // A second past the 1-second token's expiry: still open.
        await sleep(tokens.idTokenExpiresAt - Date.now() + 1_000);
        expect(client.closeCode).toBeNull();
      } else expect(tokens.idTokenExpiresAt - Date.now()).toBeGreaterThan(9 * 3600_000);
      // The administrator disables alice in the users file itself (another process's write).
      const path = join(tmp.path, file);
      const text = JSON.parse(readFileSync(path, 'utf8')) as {
        users: { revokedAt: number | null }[];
      };
      text.users[0]!.revokedAt = Date.now();
      writeFileSync(path, JSON.stringify(text));
      await client.until(() => client.closeCode !== null, 5_000);
      expect(client.closeCode).toBe(CloseCode.revoked);
      if (provider === longIdp)
        // A reconnect with the token, valid for hours yet: refused.
        expect(await handshake(relay.clientUrl('acme'), tokens.idToken)).toMatchObject({
          status: 401,
          errcode: RELAY_ERRCODE.revoked,
        });
    }
  });

  it('answers 503, not a refusal, while the provider cannot be reached', async () => {
    const gone = await startOidcProvider({ accounts });
    const issuer = gone.issuer;
    const { tokens } = await signIn(
      { issuer, clientId: DESKTOP_CLIENT_ID, scopes: ['openid', 'email'] },
      'alice',
      gone,
    );
    await gone.close();
    const { relay, users } = await ssoRelay(issuer);
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    expect(await handshake(relay.clientUrl('acme'), tokens.idToken)).toMatchObject({ status: 503 });
  });
});

// Issue 33 item 2: people mapped without a relay user of their own (the config's oidc.users, the
// phone system's extension list) are revoked as surely as those mapped by a relay user: the
// revocation is looked up before any mapping, and their open sessions (named by their address)
// are found and closed.
describe('revoking single sign-on users mapped by the config or by the phone system’s extension list', () => {
  /** `relay users <args>` as the administrator runs it: its own store, the relay notices. */
  async function relayUsers(config: Parameters<typeof usersCommand>[1], ...args: string[]) {
    const lines: string[] = [];
    const code = await usersCommand(args, config, (l) => lines.push(l));
    return { code, text: lines.join('\n') };
  }

  it('closes the open session of a config-mapped user revoked by name and refuses their next sign-in', async () => {
    const { relay, users, config } = await ssoRelay();
    // bob@example.org is mapped by oidc.users (102); the administrator also made him a relay user.
    await addUser(users, 'bob', ['102'], [], 'bob@example.org');
    const info = await orgInfo(relay.url);
    const { tokens } = await signIn(info, 'bob');
    const client = await TestClient.connect(relay.clientUrl('acme'), tokens.idToken, {});
    cleanups.push(() => client.close());
    expect(identity(client)).toMatchObject({ user: 'bob@example.org', extensions: ['102'] });

    const revoked = await relayUsers(config, 'revoke', 'bob');
    expect(revoked.code).toBe(0);
    await client.until(() => client.closeCode !== null, 5_000);
    expect(client.closeCode).toBe(CloseCode.revoked);
    // A fresh sign-in, not the remembered token: the revocation is checked before the mapping.
    const again = await signIn(info, 'bob');
    expect(await handshake(relay.clientUrl('acme'), again.tokens.idToken)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.revoked,
    });
  });

  it('revokes by e-mail address a user the config or the extension list maps without a relay user', async () => {
    const directory = {
      extensionsFor: async (_tenant: string, email: string) =>
        email === 'carol@example.org' ? ['103'] : null,
    };
    const { relay, config } = await ssoRelay(idp.issuer, {}, { directory });
    const info = await orgInfo(relay.url);
    const bob = await signIn(info, 'bob'); // oidc.users
    const carol = await signIn(info, 'carol'); // the phone system's extension list
    const b = await TestClient.connect(relay.clientUrl('acme'), bob.tokens.idToken, {});
    const c = await TestClient.connect(relay.clientUrl('acme'), carol.tokens.idToken, {});
    cleanups.push(
      () => b.close(),
      () => c.close(),
    );
    expect(identity(c)).toMatchObject({ user: 'carol@example.org', extensions: ['103'] });

    for (const [address, client] of [
      ['Bob@Example.org', b],
      ['carol@example.org', c],
    ] as const) {
      const revoked = await relayUsers(config, 'revoke', address);
      expect(revoked).toMatchObject({ code: 0 });
      expect(revoked.text).toContain('refused from now on');
      await client.until(() => client.closeCode !== null, 5_000);
      expect(client.closeCode).toBe(CloseCode.revoked);
    }
    for (const account of ['bob', 'carol']) {
      const again = await signIn(info, account);
      expect(await handshake(relay.clientUrl('acme'), again.tokens.idToken)).toMatchObject({
        status: 401,
        errcode: RELAY_ERRCODE.revoked,
      });
    }
    // Rings to their extensions reach nobody now.
    expect(relay.clientCount()).toBe(0);
  });
});

// Issue 33 item 5: claims that used to pass. Tokens from the real provider where its flows issue
// them (an e-mail_verified sent as text, an address with the Kelvin sign, an RFC 9068 access
// token whose audience is the desktop's client id); the rest signed with the provider's own key
// (the JWKS the relay trusts) with claims no oidc-provider flow yields but other providers do
// (several audiences, Keycloak's payload typ, Entra's scp, a clock ahead).
describe('sign-in claims: only an ID token, with an address that is the user’s', () => {
  it('refuses email_verified "false" (text) and an address that only folds into a user’s', async () => {
    const { relay, users } = await ssoRelay();
    await addUser(users, 'kate', ['105'], [], 'kate@example.org');
    await addUser(users, 'erin', ['106'], [], 'erin@example.org');
    // Dave's email_verified is the boolean false: mapped too, so only the claim refuses him.
    await addUser(users, 'dave', ['107'], [], 'dave@example.org');
    const info = await orgInfo(relay.url);
    const url = relay.clientUrl('acme');
    for (const account of ['erin', 'dave', 'kelvin']) {
      const { tokens } = await signIn(info, account);
      expect(await handshake(url, tokens.idToken)).toMatchObject({
        status: 403,
        errcode: RELAY_ERRCODE.notMapped,
      });
    }
    // Case still does not matter for A-Z: Bob@Example.org is the config's bob@example.org.
    const bob = await signIn(info, 'bob');
    expect(await handshake(url, bob.tokens.idToken)).toEqual({ status: 101 });
  });

  it('refuses the provider’s access token (RFC 9068, audience the client id, e-mail in it)', async () => {
    const apiIdp = await startOidcProvider({ accounts, jwtAccessTokens: true });
    cleanups.push(() => apiIdp.close());
    const { relay, users } = await ssoRelay(apiIdp.issuer);
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    const tokens = await codeFlow(apiIdp, 'alice');
    const [header, payload] = tokens.access_token.split('.').slice(0, 2).map(decode) as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    // What makes it dangerous: signed by the provider, for our client id, naming alice.
    expect(header.typ).toBe('at+jwt');
    expect(payload).toMatchObject({ aud: DESKTOP_CLIENT_ID, email: 'alice@example.org' });
    const url = relay.clientUrl('acme');
    expect(await handshake(url, tokens.id_token)).toEqual({ status: 101 });
    expect(await handshake(url, tokens.access_token)).toMatchObject({
      status: 401,
      errcode: RELAY_ERRCODE.signInRequired,
    });
  });

  it('refuses several audiences without azp, a foreign azp, a future iat and access-token markers', async () => {
    const { relay, users } = await ssoRelay();
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    const url = relay.clientUrl('acme');
    const now = Math.floor(Date.now() / 1000);
    const base = {
      iss: idp.issuer,
      sub: 'alice',
      aud: DESKTOP_CLIENT_ID,
      iat: now,
      exp: now + 600,
      email: 'alice@example.org',
      email_verified: true,
    };
    // The baseline passes, so each refusal below is the one claim changed.
    expect(await handshake(url, await providerSigned(base))).toEqual({ status: 101 });
    expect(
      await handshake(
        url,
        await providerSigned({ ...base, aud: [DESKTOP_CLIENT_ID, 'x'], azp: DESKTOP_CLIENT_ID }),
      ),
    ).toEqual({ status: 101 });
    const refused: Array<[string, string]> = [
      [
        'several audiences, no azp',
        await providerSigned({ ...base, aud: [DESKTOP_CLIENT_ID, OTHER_CLIENT_ID] }),
      ],
      ['azp another client', await providerSigned({ ...base, azp: OTHER_CLIENT_ID })],
      ['iat ten minutes ahead', await providerSigned({ ...base, iat: now + 600, exp: now + 1200 })],
      ['Keycloak access token (typ Bearer)', await providerSigned({ ...base, typ: 'Bearer' })],
      ['Entra access token (scp)', await providerSigned({ ...base, scp: 'User.Read' })],
      ['RFC 9068 header typ', await providerSigned(base, 'application/AT+JWT')],
    ];
    const answers = await Promise.all(
      refused.map(async ([why, token]) => [why, (await handshake(url, token)).status]),
    );
    expect(answers).toEqual(refused.map(([why]) => [why, 401]));
  });
});

function decode(part: string): unknown {
  return JSON.parse(Buffer.from(part, 'base64url').toString());
}

/** A token signed with the provider's own key (its JWKS is what the relay trusts). */
async function providerSigned(claims: JWTPayload, typ = 'JWT'): Promise<string> {
  const key = await importJWK(idp.signingKey as never, 'RS256');
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: String(idp.signingKey.kid), typ })
    .sign(key);
}

/** The authorization code flow with PKCE, as any client runs it, keeping the access token too. */
async function codeFlow(
  provider: OidcProviderHandle,
  account: string,
): Promise<{ id_token: string; access_token: string }> {
  const discovery = (await (
    await fetch(`${provider.issuer}/.well-known/openid-configuration`)
  ).json()) as { authorization_endpoint: string; token_endpoint: string };
  const verifier = randomBytes(32).toString('base64url');
  const redirect = 'http://127.0.0.1:1/callback';
  const auth = new URL(discovery.authorization_endpoint);
  auth.search = new URLSearchParams({
    client_id: DESKTOP_CLIENT_ID,
    response_type: 'code',
    redirect_uri: redirect,
    scope: 'openid email api',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
  }).toString();
  const back = await provider.browser(auth.toString(), account);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.toString()}`);
  const res = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirect,
      client_id: DESKTOP_CLIENT_ID,
      code_verifier: verifier,
    }).toString(),
  });
  const body = (await res.json()) as { id_token: string; access_token: string };
  if (!res.ok) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}
