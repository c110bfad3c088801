/**
 * The common part of the identity-provider fakes in this folder: an OpenID Connect provider on
 * 127.0.0.1 that serves discovery, JWKS, an authorization endpoint with a login form and a token
 * endpoint (authorization code with PKCE S256, refresh), and signs its ID tokens with its own RSA
 * key (jose). What differs between the providers people use (Google, Okta, Entra ID, Keycloak,
 * Auth0) is each family's `rules`, written from that provider's documents in its own file
 * (google.ts, okta.ts, entra.ts, keycloak.ts, auth0.ts), every behaviour with its source. The
 * standard flow itself stays tested against the
 * certified `oidc-provider` (test/support/oidc-provider.ts).
 *
 * `browser` plays the system browser: it opens the authorization URL, signs in at the login form
 * as the given account, and delivers the provider's redirect to the app's loopback address; when
 * the provider answers with an error page instead (as Google and Okta do for a bad scope or
 * redirect address, without coming back to the app), it returns that page.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { importJWK, SignJWT, type JWK } from 'jose';

/** A person at the provider. */
export interface FakeAccount {
  sub: string;
  email?: string;
  /** Any further claims the provider puts in this person's ID token (hd, tid, upn, ...). */
  claims?: Record<string, unknown>;
}

/** One authorization as the provider remembers it (behind a code, then a refresh token). */
export interface Grant {
  clientId: string;
  redirectUri: string;
  scope: string[];
  /** The authorization request's parameters, as sent. */
  params: URLSearchParams;
  account: FakeAccount;
  nonce: string | null;
  challenge: string;
}

export interface Answer {
  status: number;
  contentType: 'text/html' | 'application/json';
  body: string;
}

export const page = (status: number, text: string): Answer => ({
  status,
  contentType: 'text/html',
  body: `<!doctype html><title>Error ${status}</title><p>${text}</p>`,
});
export const json = (status: number, body: object): Answer => ({
  status,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

/** The `email` and `email_verified` claims a provider adds to the ID token with the email scope. */
export function emailClaims(grant: Grant, verified = true): Record<string, unknown> {
  const { email } = grant.account;
  return grant.scope.includes('email') && email ? { email, email_verified: verified } : {};
}

/** A public client's check at the token endpoint: its client id, no secret; else `refusal`. */
export function publicClient(clientId: string, refusal: Answer): FamilyRules['clientAuth'] {
  return (form) => (form.get('client_id') === clientId ? null : refusal);
}

/** What a provider family does differently (each written from its documents). */
export interface FamilyRules {
  /** The authorization request checked before the login page: an error page, or null. */
  authorize(params: URLSearchParams): Answer | null;
  /** Client authentication at the token endpoint (both grants): an error answer, or null. */
  clientAuth(form: URLSearchParams): Answer | null;
  /** Whether this grant gets a refresh token. */
  refreshToken(grant: Grant): boolean;
  /** The ID token's claims beyond iss, aud, iat, exp and nonce. */
  claims(grant: Grant): Record<string, unknown>;
  /** Other paths the provider serves (Entra's /common discovery): handled, or false. */
  route?(path: string, res: http.ServerResponse, base: FakeIdp): boolean;
}

export interface FakeIdpOptions {
  /** Paths under the server's origin. */
  paths: { issuer: string; authorize: string; token: string; jwks: string };
  accounts: Record<string, FakeAccount>;
  /** ID token lifetime (s); default 3600. Changeable later through `idTokenTtlSec`. */
  idTokenTtlSec?: number;
}

export interface BrowserResult {
  /** The provider's error page when it did not send the browser back to the app. */
  refused?: { status: number; text: string };
  /** The app's answer page when it did. */
  appPage?: string;
  /** Where the provider sent the browser back to. */
  redirect?: URL;
}

export class FakeIdp {
  readonly origin: string;
  readonly issuer: string;
  idTokenTtlSec: number;
  /** Every token request's form, in order (what the app sent). */
  readonly tokenRequests: URLSearchParams[] = [];
  /** Every authorization request's parameters, in order. */
  readonly authorizeRequests: URLSearchParams[] = [];
  private readonly server: http.Server;
  private readonly rules: FamilyRules;
  private readonly options: FakeIdpOptions;
  private readonly codes = new Map<string, Grant>();
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly key: { jwk: JWK; publicJwk: JWK; kid: string };

  private constructor(server: http.Server, rules: FamilyRules, options: FakeIdpOptions) {
    this.server = server;
    this.rules = rules;
    this.options = options;
    this.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.issuer = this.origin + options.paths.issuer;
    this.idTokenTtlSec = options.idTokenTtlSec ?? 3600;
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.key = {
      jwk: privateKey.export({ format: 'jwk' }) as JWK,
      publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
      kid: randomBytes(8).toString('hex'),
    };
    server.on('request', (req, res) => void this.handle(req, res));
  }

  static async start(rules: FamilyRules, options: FakeIdpOptions): Promise<FakeIdp> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FakeIdp(server, rules, options);
  }

  /** The discovery document, with this issuer (or another, as Entra's /common publishes). */
  discovery(issuer = this.issuer): Record<string, unknown> {
    const { paths } = this.options;
    return {
      issuer,
      authorization_endpoint: this.origin + paths.authorize,
      token_endpoint: this.origin + paths.token,
      jwks_uri: this.origin + paths.jwks,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
    };
  }

  /** Signs in at `authorizationUrl` as `account` and follows the provider's answer. */
  async browser(authorizationUrl: string, account: string): Promise<BrowserResult> {
    const first = await fetch(authorizationUrl, { redirect: 'manual' });
    const text = await first.text();
    if (first.status !== 200) return { refused: { status: first.status, text } };
    // The login form: the person signs in (the form posts back to the same address).
    const login = await fetch(authorizationUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ login: account }).toString(),
    });
    const location = login.headers.get('location');
    await login.arrayBuffer();
    if (login.status !== 302 || !location)
      return { refused: { status: login.status, text: 'the login was refused' } };
    const redirect = new URL(location);
    const app = await fetch(redirect);
    return { redirect, appPage: await app.text() };
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private send(res: http.ServerResponse, answer: Answer, headers: Record<string, string> = {}) {
    res.writeHead(answer.status, {
      'Content-Type': `${answer.contentType}; charset=utf-8`,
      'Cache-Control': 'no-store',
      ...headers,
    });
    res.end(answer.body);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', this.origin);
      const { paths } = this.options;
      if (this.rules.route?.(url.pathname, res, this)) return;
      // OpenID Connect Discovery 4: a terminating `/` of the issuer (Auth0's) is removed first.
      if (url.pathname === paths.issuer.replace(/\/$/, '') + '/.well-known/openid-configuration')
        return this.send(res, json(200, this.discovery()));
      if (url.pathname === paths.jwks)
        return this.send(
          res,
          json(200, {
            keys: [{ ...this.key.publicJwk, kid: this.key.kid, use: 'sig', alg: 'RS256' }],
          }),
        );
      if (url.pathname === paths.authorize) return await this.authorize(req, res, url);
      if (url.pathname === paths.token && req.method === 'POST') return await this.token(req, res);
      this.send(res, page(404, 'Not found'));
    } catch (error) {
      this.send(res, page(500, (error as Error).message));
    }
  }

  private async authorize(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    const params = url.searchParams;
    if (req.method === 'GET') {
      this.authorizeRequests.push(new URLSearchParams(params));
      const refused = this.rules.authorize(params);
      if (refused) return this.send(res, refused);
      if (params.get('code_challenge_method') !== 'S256' || !params.get('code_challenge'))
        return this.send(res, page(400, 'PKCE with S256 is required'));
      return this.send(res, {
        status: 200,
        contentType: 'text/html',
        body: '<form method="post"><input name="login"><button>Sign in</button></form>',
      });
    }
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const account = this.options.accounts[new URLSearchParams(body).get('login') ?? ''];
    if (!account) return this.send(res, page(401, 'No such account'));
    const code = randomBytes(16).toString('base64url');
    this.codes.set(code, {
      clientId: params.get('client_id') ?? '',
      redirectUri: params.get('redirect_uri') ?? '',
      scope: (params.get('scope') ?? '').split(' ').filter(Boolean),
      params: new URLSearchParams(params),
      account,
      nonce: params.get('nonce'),
      challenge: params.get('code_challenge') ?? '',
    });
    const back = new URL(params.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    const state = params.get('state');
    if (state) back.searchParams.set('state', state);
    res.writeHead(302, { Location: back.href }).end();
  }

  private async token(req: http.IncomingMessage, res: http.ServerResponse) {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const form = new URLSearchParams(body);
    this.tokenRequests.push(form);
    const refused = this.rules.clientAuth(form);
    if (refused) return this.send(res, refused);
    const invalidGrant = json(400, { error: 'invalid_grant' });
    let grant: Grant | undefined;
    let refreshToken: string | undefined;
    if (form.get('grant_type') === 'authorization_code') {
      grant = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      if (!grant || grant.clientId !== form.get('client_id')) return this.send(res, invalidGrant);
      if (grant.redirectUri !== form.get('redirect_uri')) return this.send(res, invalidGrant);
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (challenge !== grant.challenge) return this.send(res, invalidGrant);
      if (this.rules.refreshToken(grant)) {
        refreshToken = randomBytes(24).toString('base64url');
        this.refreshTokens.set(refreshToken, grant);
      }
    } else if (form.get('grant_type') === 'refresh_token') {
      grant = this.refreshTokens.get(form.get('refresh_token') ?? '');
      if (!grant || grant.clientId !== form.get('client_id')) return this.send(res, invalidGrant);
      grant = { ...grant, nonce: null };
    } else return this.send(res, json(400, { error: 'unsupported_grant_type' }));
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT({
      ...this.rules.claims(grant),
      ...(grant.nonce ? { nonce: grant.nonce } : {}),
    })
      .setProtectedHeader({ alg: 'RS256', kid: this.key.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(grant.clientId)
      .setSubject(grant.account.sub)
      .setIssuedAt(now)
      .setExpirationTime(now + this.idTokenTtlSec)
      .sign(await importJWK(this.key.jwk, 'RS256'));
    this.send(
      res,
      json(200, {
        access_token: randomBytes(24).toString('base64url'),
        token_type: 'Bearer',
        expires_in: 3599,
        scope: grant.scope.join(' '),
        id_token: idToken,
        ...(refreshToken ? { refresh_token: refreshToken } : {}),
      }),
    );
  }
}

/** A port that was free a moment ago on 127.0.0.1 (for a fixed redirect port). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether a redirect address is on the loopback interface (http, 127.0.0.1 / [::1] / localhost). */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname);
  } catch {
    return false;
  }
}
