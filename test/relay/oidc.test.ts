import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { systemClock } from '../../src-shared/clock.ts';
import {
  CloseCode,
  RELAY_ERRCODE,
  relayOrgPath,
  type ControlFrame,
  type OrgSignInInfo,
} from '../../src-shared/relay-protocol.ts';
import {
  refreshSignIn,
  signInWithBrowser,
  type OidcTokens,
} from '../../src-main/core/org/oidc-sign-in.ts';
import {
  DESKTOP_CLIENT_ID,
  OTHER_CLIENT_ID,
  startOidcProvider,
  type OidcProviderHandle,
} from '../support/oidc-provider.ts';
import { useTempDir } from '../support/temp-dir.ts';
import type { RelayDeps } from '../../src-relay/server.ts';
import { usersCommand } from '../../src-relay/users/users-cli.ts';
import { TestClient } from './helpers.ts';
import {
  ALL_KINDS,
  addUser,
  orgConfig,
  postAll,
  startOrgRelay,
  twoUsersDay,
} from './users-support.ts';

// Single sign-on against a real OpenID provider (oidc-provider on 127.0.0.1): the desktop's own
// sign-in code (authorization code + PKCE, loopback redirect) gets the tokens; the relay checks
// them (docs/relay-protocol.md section 2.3).
const tmp = useTempDir('relay-oidc-');
const accounts = {
  alice: { email: 'alice@example.org' },
  bob: { email: 'Bob@Example.org' },
  carol: { email: 'carol@example.org' },
  dave: { email: 'dave@example.org', emailVerified: false },
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

  it('refuses an expired token, ends a session when its token expires (4002), and admits the refreshed one', async () => {
    const shortIdp = await startOidcProvider({ accounts, idTokenTtlSec: 3 });
    cleanups.push(() => shortIdp.close());
    const { relay, users } = await ssoRelay(shortIdp.issuer, {});
    await addUser(users, 'alice', ['101'], [], 'alice@example.org');
    const info = await orgInfo(relay.url);
    const { tokens } = await signIn(info, 'alice', shortIdp);
    const client = await TestClient.connect(relay.clientUrl('acme'), tokens.idToken, {});
    cleanups.push(() => client.close());
    await client.until(() => client.closeCode !== null, 12_000);
    expect(client.closeCode).toBe(CloseCode.reauthenticate);
    expect(Date.now()).toBeGreaterThanOrEqual(tokens.idTokenExpiresAt);
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
