/**
 * A real OpenID Connect provider for tests: panva's certified `oidc-provider` on 127.0.0.1 (a
 * devDependency), with a native public client for the desktop (loopback redirect, PKCE required,
 * RFC 8252) and a second client whose tokens must not be accepted. The provider signs with its own
 * RSA key and serves discovery and JWKS as any provider does; nothing here signs a token by hand.
 *
 * `browser` plays the system browser the desktop opens: it follows the provider's redirects with
 * cookies, signs in at the login page as the given account, consents, and delivers the final
 * redirect to the desktop's loopback address, as a person at a real browser would.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Provider, type Configuration } from 'oidc-provider';

function newSigningKey(): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...privateKey.export({ format: 'jwk' }),
    kid: randomBytes(8).toString('hex'),
    use: 'sig',
    alg: 'RS256',
  };
}

/**
 * The provider's storage (sessions, codes, grants, refresh tokens), in memory, one per provider: the
 * adapter interface of oidc-provider's documentation, so it does not fall back to its own
 * development adapter (and warn about it on every start).
 */
function memoryAdapter() {
  const stores = new Map<string, Map<string, Record<string, unknown>>>();
  return class MemoryAdapter {
    private readonly items: Map<string, Record<string, unknown>>;

    constructor(name: string) {
      let items = stores.get(name);
      if (!items) stores.set(name, (items = new Map()));
      this.items = items;
    }

    async upsert(id: string, payload: Record<string, unknown>): Promise<void> {
      this.items.set(id, payload);
    }
    async find(id: string): Promise<Record<string, unknown> | undefined> {
      return this.items.get(id);
    }
    async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
      for (const p of this.items.values()) if (p.uid === uid) return p;
      return undefined;
    }
    async findByUserCode(code: string): Promise<Record<string, unknown> | undefined> {
      for (const p of this.items.values()) if (p.userCode === code) return p;
      return undefined;
    }
    async consume(id: string): Promise<void> {
      const p = this.items.get(id);
      if (p) p.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string): Promise<void> {
      this.items.delete(id);
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      for (const [id, p] of this.items) if (p.grantId === grantId) this.items.delete(id);
    }
  };
}

export const DESKTOP_CLIENT_ID = 'screenpop-desktop';
export const OTHER_CLIENT_ID = 'some-other-app';

export interface TestAccount {
  /** Absent: no `email` claim (an Entra ID user without a mail attribute). */
  email?: string;
  /** The `preferred_username` claim (profile scope), as Entra ID sends the user's UPN. */
  preferredUsername?: string;
  /** The `email_verified` claim as the provider sends it (a boolean, or text as some send it); default true. */
  emailVerified?: boolean | string;
}

/** The resource the desktop's access tokens are for, when `jwtAccessTokens` is on. */
export const API_RESOURCE = 'urn:screenpop:api';

export interface OidcProviderHandle {
  issuer: string;
  /** The private signing key (JWK). */
  signingKey: Record<string, unknown>;
  provider: Provider;
  /** Signs in as `account` at `authorizationUrl` and returns the final redirect's URL (not followed). */
  browser(authorizationUrl: string, account: string): Promise<URL>;
  /** As `browser`, then delivers the redirect to its (loopback) address and returns the answer's text. */
  signIn(authorizationUrl: string, account: string): Promise<string>;
  close(): Promise<void>;
}

export async function startOidcProvider(
  options: {
    accounts?: Record<string, TestAccount>;
    /** Lifetime of ID tokens (s); default 3600. */
    idTokenTtlSec?: number;
    /** The signing key (a private JWK), to make a second provider that signs with the same key. */
    signingKey?: Record<string, unknown>;
    /**
     * Access tokens as RFC 9068 JWTs (typ at+jwt, a `scope` claim), for the resource API_RESOURCE
     * whose audience is the desktop's client id, and carrying the `email` claim: what Entra ID
     * issues to an app registration that exposes its own API (aud = its client id, e-mail in the
     * access token). Such a token must never pass for an ID token.
     */
    jwtAccessTokens?: boolean;
  } = {},
): Promise<OidcProviderHandle> {
  const accounts = options.accounts ?? {};
  const jwk = options.signingKey ?? newSigningKey();
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const native = (client_id: string) => ({
    client_id,
    application_type: 'native' as const,
    token_endpoint_auth_method: 'none' as const,
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code' as const],
  });
  const configuration: Configuration = {
    clients: [native(DESKTOP_CLIENT_ID), native(OTHER_CLIENT_ID)],
    jwks: { keys: [jwk as never] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    features: {
      devInteractions: { enabled: false },
      ...(options.jwtAccessTokens && {
        resourceIndicators: {
          enabled: true,
          defaultResource: () => API_RESOURCE,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({
            scope: 'api',
            audience: DESKTOP_CLIENT_ID,
            accessTokenFormat: 'jwt' as const,
            jwt: { sign: { alg: 'RS256' as const } },
          }),
        },
      }),
    },
    ...(options.jwtAccessTokens && {
      extraTokenClaims: async (_ctx, token) => {
        const id = 'accountId' in token ? String(token.accountId) : '';
        const account = accounts[id];
        return account ? { email: account.email } : undefined;
      },
    }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    // Like Google and Entra ID, the ID token carries the e-mail claim the scope asked for.
    conformIdTokenClaims: false,
    // Refresh tokens for the native client without prompt=consent (Entra ID's behaviour).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      IdToken: options.idTokenTtlSec ?? 3600,
      AccessToken: 3600,
      AuthorizationCode: 60,
      RefreshToken: 86_400,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
    },
    findAccount: async (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          ...(account.email !== undefined && {
            email: account.email,
            email_verified: account.emailVerified ?? true,
          }),
          ...(account.preferredUsername !== undefined && {
            preferred_username: account.preferredUsername,
          }),
          name: id,
        }),
      };
    },
  };
  const provider = new Provider(issuer, { ...configuration, adapter: memoryAdapter() });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    const m = /^\/interaction\/([^/?]+)$/.exec(req.url ?? '');
    if (m && req.method === 'POST') void interaction(req, res);
    else if (m) {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<form method="post"><input name="login"><button>Sign in</button></form>`);
    } else callback(req, res);
  });

  /** The login page's and the consent page's answers (what a person submits). */
  async function interaction(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const form = new URLSearchParams(body);
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: form.get('login') ?? '' } },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const grant = new provider.Grant({
        accountId: details.session!.accountId,
        clientId: String(details.params.client_id),
      });
      const missing = (details.prompt.details as { missingOIDCScope?: string[] }).missingOIDCScope;
      if (missing) grant.addOIDCScope(missing.join(' '));
      const claims = (details.prompt.details as { missingOIDCClaims?: string[] }).missingOIDCClaims;
      if (claims) grant.addOIDCClaims(claims);
      const resources = (
        details.prompt.details as { missingResourceScopes?: Record<string, string[]> }
      ).missingResourceScopes;
      for (const [resource, scopes] of Object.entries(resources ?? {}))
        grant.addResourceScope(resource, scopes.join(' '));
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
    } catch (err) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end((err as Error).message);
    }
  }

  async function browser(authorizationUrl: string, account: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = new URL(authorizationUrl);
    let method = 'GET';
    let body: string | undefined;
    for (let hop = 0; hop < 20; hop++) {
      if (url.origin !== issuer) return url; // leaving the provider: the redirect to the app
      const res = await fetch(url, {
        method,
        redirect: 'manual',
        headers: {
          Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(body ? { body } : {}),
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair, ...attrs] = line.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq).trim();
        const gone = attrs.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
        if (gone) jar.delete(name);
        else jar.set(name, pair!.slice(eq + 1).trim());
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        url = new URL(location, url);
        method = 'GET';
        body = undefined;
        continue;
      }
      const text = await res.text();
      if (res.status === 200 && /^\/interaction\//.test(url.pathname)) {
        // The login page, then the consent page: a person signs in as `account`, then agrees.
        method = 'POST';
        body = new URLSearchParams({ login: account }).toString();
        continue;
      }
      throw new Error(
        `the provider answered ${res.status} at ${url.pathname}: ${text.slice(0, 300)}`,
      );
    }
    throw new Error('too many redirects at the provider');
  }

  return {
    issuer,
    signingKey: jwk,
    provider,
    browser,
    async signIn(authorizationUrl, account) {
      const redirect = await browser(authorizationUrl, account);
      const res = await fetch(redirect);
      return res.text();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
