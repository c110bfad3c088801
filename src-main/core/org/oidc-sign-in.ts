/**
 * Single sign-on for organisation mode (docs/relay-protocol.md section 2.3), as RFC 8252 asks of a
 * native app: the authorization code flow with PKCE (RFC 7636, S256) in the system browser, the
 * answer received on a loopback address (http://127.0.0.1:<any free port>/callback, RFC 8252 7.3
 * and 8.3), `state` against forged answers and `nonce` against a replayed ID token. The protocol
 * work (discovery, the token request, the ID token's claims: iss, aud, exp, iat, nonce) is
 * oauth4webapi's, a certified relying-party library; this module adds the loopback listener, the
 * browser hand-off and the refresh.
 *
 * What real providers ask beyond that comes from the relay's configuration, never from the
 * provider's name (docs/relay-protocol.md 2.3.1): a client secret sent to the token endpoint
 * (Google's "Desktop app" clients want it even with PKCE; the caller registers it with the log
 * scrubber), extra authorization parameters (Google's access_type=offline), and a fixed loopback
 * host and port (Okta and Auth0 match the redirect address exactly, port included).
 *
 * What the app keeps is the refresh token (in the keychain) and the ID token, which it presents to
 * the relay; neither is ever the phone system's secret.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { isLoopbackHost } from '../../../src-shared/net/loopback.ts';
import {
  RESERVED_AUTHORIZATION_PARAMS,
  type OidcClientInfo,
} from '../../../src-shared/relay/relay-protocol.ts';

/** The provider as the relay names it (GET /v1/org/<tenant>). */
export type OidcProviderInfo = OidcClientInfo;

/** What a sign-in or a refresh yields. */
export interface OidcTokens {
  idToken: string;
  /** Wall-clock ms at which the ID token stops being accepted (its `exp`). */
  idTokenExpiresAt: number;
  /** null when the provider gave none (then the user signs in again when the ID token ends). */
  refreshToken: string | null;
  /** The e-mail address the provider vouches for, when it says. */
  email: string | null;
}

export interface OidcDeps {
  clock: Clock;
  /** The one way out (NetTransport.fetch): proxy and trusted CAs apply to the provider too. */
  fetch: typeof fetch;
  /** Hands the URL to the system browser (shell.openExternal; the runner prints it). */
  openBrowser: (url: string) => Promise<void> | void;
  /** The page the browser shows once it has come back: done, or what went wrong. */
  page?: (outcome: 'signed-in' | 'failed') => string;
  /** How long to wait for the person to finish in the browser. Default 5 minutes. */
  timeoutMs?: number;
  /** Ends the wait at once (the person pressed Cancel, or started another sign-in). */
  signal?: AbortSignal;
}

export class OidcSignInError extends Error {
  /**
   * `cancelled`: the person closed or refused it; `timeout`; `provider`: the provider or the
   * answer failed; `port-taken`: the fixed loopback port (`oidc.redirectPort`) is in use here.
   */
  readonly kind: 'cancelled' | 'timeout' | 'provider' | 'port-taken';
  /** With `port-taken`: the loopback address that could not be listened on. */
  readonly loopback: { host: string; port: number } | undefined;
  constructor(
    kind: OidcSignInError['kind'],
    message: string,
    options?: { cause?: unknown; loopback?: { host: string; port: number } },
  ) {
    super(message, options);
    this.name = 'OidcSignInError';
    this.kind = kind;
    this.loopback = options?.loopback;
  }
}

/** How the app authenticates at the token endpoint: a secret when the provider wants one. */
function clientAuth(info: OidcProviderInfo): oauth.ClientAuth {
  return info.clientSecret ? oauth.ClientSecretPost(info.clientSecret) : oauth.None();
}

/** oauth4webapi's options for our transport: string bodies, and http only for a loopback issuer. */
function requestOptions(issuer: URL, deps: Pick<OidcDeps, 'fetch'>) {
  const loopback = isLoopbackHost(issuer.hostname);
  return {
    [oauth.customFetch]: ((url: string, init: RequestInit) =>
      deps.fetch(url, {
        ...init,
        body: init.body instanceof URLSearchParams ? init.body.toString() : init.body,
      })) as typeof fetch,
    ...(issuer.protocol === 'http:' && loopback ? { [oauth.allowInsecureRequests]: true } : {}),
  };
}

async function discover(info: OidcProviderInfo, deps: Pick<OidcDeps, 'fetch'>) {
  const issuer = new URL(info.issuer);
  try {
    const res = await oauth.discoveryRequest(issuer, requestOptions(issuer, deps));
    return await oauth.processDiscoveryResponse(issuer, res);
  } catch (err) {
    throw new OidcSignInError('provider', `the sign-in provider ${issuer.host} could not be read`, {
      cause: err,
    });
  }
}

/**
 * Signs in through the system browser and returns the tokens. Rejects with OidcSignInError:
 * cancelled (an error answer such as access_denied), timeout, or provider.
 */
export async function signInWithBrowser(
  info: OidcProviderInfo,
  deps: OidcDeps,
): Promise<OidcTokens> {
  const as = await discover(info, deps);
  const client: oauth.Client = { client_id: info.clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const host = info.redirectHost ?? '127.0.0.1';
  const loop = await listenOnLoopback(deps, host, info.redirectPort ?? 0);
  try {
    const redirectUri = `http://${host}:${loop.port}/callback`;
    const url = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries(info.authorizationParams ?? {}))
      if (!(RESERVED_AUTHORIZATION_PARAMS as readonly string[]).includes(name))
        url.searchParams.set(name, value);
    url.searchParams.set('client_id', info.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', info.scopes.join(' '));
    url.searchParams.set('code_challenge', challenge);
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    url.searchParams.set('nonce', nonce);
    await deps.openBrowser(url.href);
    const callback = await loop.answer;
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, client, callback, state);
    } catch (err) {
      loop.respond('failed');
      if (err instanceof oauth.AuthorizationResponseError)
        throw new OidcSignInError('cancelled', `the sign-in was not completed (${err.error})`, {
          cause: err,
        });
      throw new OidcSignInError('provider', 'the sign-in answer was not valid', { cause: err });
    }
    try {
      const issuer = new URL(info.issuer);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth(info),
        params,
        redirectUri,
        verifier,
        requestOptions(issuer, deps),
      );
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: nonce,
        requireIdToken: true,
      });
      loop.respond('signed-in');
      return tokensOf(result, info);
    } catch (err) {
      loop.respond('failed');
      throw new OidcSignInError('provider', 'the sign-in provider did not give a valid token', {
        cause: err,
      });
    }
  } finally {
    loop.close();
  }
}

/**
 * A fresh ID token for a refresh token. Rejects with OidcSignInError('cancelled') when the
 * provider refuses the refresh token (expired, revoked: the person signs in again), 'provider'
 * when it cannot be reached or answers nonsense (try again later).
 */
export async function refreshSignIn(
  info: OidcProviderInfo,
  refreshToken: string,
  deps: Pick<OidcDeps, 'fetch'>,
): Promise<OidcTokens> {
  const as = await discover(info, deps);
  const client: oauth.Client = { client_id: info.clientId };
  let result: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuth(info),
      refreshToken,
      requestOptions(new URL(info.issuer), deps),
    );
    result = await oauth.processRefreshTokenResponse(as, client, response);
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant')
      throw new OidcSignInError('cancelled', 'the sign-in has ended; sign in again', {
        cause: err,
      });
    throw new OidcSignInError('provider', 'the sign-in provider could not renew the sign-in', {
      cause: err,
    });
  }
  const tokens = tokensOf(result, info);
  // Providers may keep the refresh token as it was (no rotation): keep using ours then.
  return { ...tokens, refreshToken: tokens.refreshToken ?? refreshToken };
}

/**
 * The tokens of an answer; `email` is who signed in, from the claim the relay reads addresses
 * from (`info.emailClaim`, e.g. Entra's `preferred_username`), else `email`: shown in Settings.
 */
function tokensOf(
  result: oauth.TokenEndpointResponse,
  info: Pick<OidcProviderInfo, 'emailClaim'>,
): OidcTokens {
  const claims = oauth.getValidatedIdTokenClaims(result);
  if (!result.id_token || !claims)
    throw new OidcSignInError('provider', 'the sign-in provider gave no ID token');
  const named = claims[info.emailClaim ?? 'email'];
  const email =
    typeof named === 'string' ? named : typeof claims.email === 'string' ? claims.email : null;
  return {
    idToken: result.id_token,
    idTokenExpiresAt: claims.exp * 1000,
    refreshToken: typeof result.refresh_token === 'string' ? result.refresh_token : null,
    email,
  };
}

interface Loopback {
  port: number;
  /** The URL the browser came back with. */
  answer: Promise<URL>;
  /** The page shown in the browser for the answer. */
  respond(outcome: 'signed-in' | 'failed'): void;
  close(): void;
}

/**
 * A one-shot HTTP listener on the loopback interface at a port the OS picks, or at the configured
 * one. With the host 127.0.0.1 (the default: `localhost` may resolve elsewhere, RFC 8252 8.3) it
 * listens there; with `localhost` (for a provider registration that names it) on 127.0.0.1 and,
 * where the computer has it, ::1, since the browser may resolve the name to either. It takes the
 * first request to /callback and answers it once the sign-in is settled; anything else is 404.
 * It ends after the answer or the time-out. A fixed port in use (or refused) rejects with
 * OidcSignInError('port-taken').
 */
async function listenOnLoopback(deps: OidcDeps, host: string, wanted: number): Promise<Loopback> {
  let pending: http.ServerResponse | undefined;
  let settle!: (url: URL) => void;
  let fail!: (err: Error) => void;
  const answer = new Promise<URL>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || pending || req.method !== 'GET') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end();
      return;
    }
    pending = res;
    settle(new URL(`http://${host}:${port}${req.url ?? ''}`));
  };
  const servers: http.Server[] = [];
  const listen = (address: string, at: number) => {
    const server = http.createServer(onRequest);
    return new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, address, () => {
        servers.push(server);
        resolve((server.address() as AddressInfo).port);
      });
    });
  };
  const taken = (error: unknown, address: string, at: number) => {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    return code === 'EADDRINUSE' || code === 'EACCES'
      ? new OidcSignInError('port-taken', `the sign-in port ${address}:${at} is in use`, {
          cause: error,
          loopback: { host, port: at },
        })
      : error;
  };
  let port: number;
  try {
    port = await listen('127.0.0.1', wanted);
  } catch (error) {
    throw taken(error, '127.0.0.1', wanted);
  }
  if (host === 'localhost')
    try {
      await listen('::1', port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException | undefined)?.code;
      // No IPv6 here: the name can only mean 127.0.0.1. A fixed port another program holds on
      // ::1 would receive the browser's answer: refused like a taken port.
      if (wanted !== 0 && code === 'EADDRINUSE') {
        for (const s of servers) s.close();
        throw taken(error, '::1', wanted);
      }
    }
  const timer = deps.clock.setTimeout(
    () =>
      fail(new OidcSignInError('timeout', 'the sign-in was not finished in the browser in time')),
    deps.timeoutMs ?? 5 * 60_000,
  );
  const abort = () => fail(new OidcSignInError('cancelled', 'the sign-in was cancelled'));
  if (deps.signal?.aborted) abort();
  deps.signal?.addEventListener('abort', abort, { once: true });
  void answer.catch(() => {});
  return {
    port,
    answer,
    respond(outcome) {
      if (!pending || pending.headersSent) return;
      const body =
        deps.page?.(outcome) ?? (outcome === 'signed-in' ? 'Signed in.' : 'Not signed in.');
      pending.writeHead(outcome === 'signed-in' ? 200 : 400, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Cache-Control': 'no-store',
      });
      pending.end(body);
    },
    close() {
      deps.clock.clearTimeout(timer);
      deps.signal?.removeEventListener('abort', abort);
      // The answer page has been written; a browser's idle keep-alive connection must not hold
      // the port, and one still reading gets a second before it is cut.
      for (const server of servers) {
        server.close();
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1_000).unref();
      }
    },
  };
}
