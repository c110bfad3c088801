/**
 * How the CONNECT tunnel (tunnel.ts) answers a proxy's `407 Proxy-Authenticate`: Negotiate
 * (Kerberos, through the OS's GSSAPI or Windows SSPI with the user's own sign-in), NTLM (NTLMv2
 * with a configured user name and password, ntlm.ts) and Basic (the configured user name and
 * password), preferred in that order among the schemes the proxy offers.
 *
 * Why these means: Negotiate needs the user's Kerberos credentials, which only the OS's security
 * library holds (the ticket cache on Linux and macOS, the logged-on session on Windows). The npm
 * `kerberos` package (mongodb-js/kerberos, the binding MongoDB's driver uses; maintained, N-API)
 * wraps both GSSAPI and SSPI; it is an optional dependency loaded on first use (gssapi.ts), so a
 * machine without it still speaks Basic and NTLM and says why Negotiate is unavailable. Chromium's
 * own proxy authentication (Electron's `net`) was not used: the runner and the relay have no
 * Chromium, and every connection must go through the one transport. NTLM with the logged-on
 * user's own credentials exists only on Windows (SSPI); the binding's SSPI speaks the Negotiate
 * package, which falls back to NTLM inside Negotiate. A proxy offering NTLM alone is answered
 * only with configured credentials (`DOMAIN\user:password`), everywhere.
 *
 * Every token and message exchanged is a secret (`onSecret`): they travel in headers only, and
 * the log and the status name the scheme and the identity, never a token.
 */
import type { ProxyServer } from './proxy.ts';
import type { Gssapi, GssapiProblem } from './gssapi.ts';
import { ntlmAuthenticate, ntlmNegotiate, parseNtlmChallenge } from './ntlm.ts';

export type ProxyAuthScheme = 'Negotiate' | 'NTLM' | 'Basic';

/** Preference among the schemes a proxy offers. */
export const SCHEME_PREFERENCE: readonly ProxyAuthScheme[] = ['Negotiate', 'NTLM', 'Basic'];

/**
 * `automatic`: every scheme the proxy offers that this computer can answer, Negotiate first (the
 * default). `basic`: only Basic with configured credentials (a policy may lock this, e.g. where
 * Kerberos tickets must not be offered to a proxy). `none`: never answer a 407.
 */
export type ProxyAuthMode = 'automatic' | 'basic' | 'none';
export const PROXY_AUTH_MODES: readonly ProxyAuthMode[] = ['automatic', 'basic', 'none'];

/** At most this many authenticated requests on one connection (Negotiate 1-2, NTLM 2). */
export const MAX_AUTH_LEGS = 4;

/** One `Proxy-Authenticate` challenge: its scheme and the token or parameters after it. */
export interface Challenge {
  scheme: string;
  data: string;
}

/**
 * The challenges of a 407's `Proxy-Authenticate` header lines. A line may carry several,
 * separated by commas (`Negotiate, NTLM`); Basic's `realm="a, b"` stays with Basic.
 */
export function parseChallenges(lines: string[]): Challenge[] {
  const out: Challenge[] = [];
  for (const line of lines) {
    // Split at commas followed by a token that is not a parameter (no `=` right after it).
    const parts = line.split(/,(?=\s*[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*(?:\s+[^=\s]|\s*$|\s*,))/);
    for (const part of parts) {
      const match = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+(.*))?$/.exec(part);
      if (match?.[1]) out.push({ scheme: match[1], data: (match[2] ?? '').trim() });
      if (out.length >= 16) return out;
    }
  }
  return out;
}

/** The scheme's canonical name, or undefined for one we do not speak (Digest, Bearer...). */
export function knownScheme(name: string): ProxyAuthScheme | undefined {
  const lower = name.toLowerCase();
  return SCHEME_PREFERENCE.find((s) => s.toLowerCase() === lower);
}

/** One authentication in progress on one connection. */
export interface AuthExchange {
  readonly scheme: ProxyAuthScheme;
  /** Who we authenticate as, for the status and the log (never a secret); once known. */
  identity(): string | undefined;
  /**
   * The `Proxy-Authorization` value answering `challenge` (the token after the scheme in the
   * proxy's 407, '' for the first leg); undefined when this scheme has nothing more to say.
   */
  respond(challenge: string): Promise<string | undefined>;
  /** The proxy's final token (Negotiate's mutual authentication on the 2xx), if any. */
  finish(token: string): Promise<void>;
  /**
   * The handshake is over (open or failed): its tokens, good for this connection only, are no
   * longer kept as secrets to scrub (the registry would otherwise grow by one per connection).
   */
  done(): void;
}

/** Why a scheme the proxy offers cannot be answered here (for the status, in plain words). */
export interface Unavailable {
  scheme: ProxyAuthScheme;
  reason: string;
  /** For Negotiate: what the Kerberos library said is missing (gssapi.ts). */
  problem?: GssapiProblem;
}

export interface ProxyAuthDeps {
  mode: ProxyAuthMode;
  /** Loads the GSSAPI/SSPI binding (gssapi.ts); rejects with the reason it is unavailable. */
  gssapi?: () => Promise<Gssapi>;
  /** Every token and message exchanged is registered here as a secret. */
  onSecret: (secret: string) => void;
  /** A secret registered through onSecret that can no longer be used (see AuthExchange.done). */
  forgetSecret?: (secret: string) => void;
  now: () => number;
}

function basicOf(auth: string): string {
  return `Basic ${Buffer.from(auth, 'utf8').toString('base64')}`;
}

function userPassword(auth: string): { user: string; password: string } {
  const at = auth.indexOf(':');
  return at < 0
    ? { user: auth, password: '' }
    : { user: auth.slice(0, at), password: auth.slice(at + 1) };
}

/**
 * The authenticator of one transport: which schemes it may use with a proxy, and one exchange per
 * connection. Remembers, per proxy, the scheme that last succeeded, so that the next connection
 * to it sends its first leg at once instead of asking without credentials first.
 */
export class ProxyAuthenticator {
  private readonly deps: ProxyAuthDeps;
  private readonly lastScheme = new Map<string, ProxyAuthScheme>();
  private gssapiLoad: Promise<Gssapi> | undefined;

  constructor(deps: ProxyAuthDeps) {
    this.deps = deps;
  }

  get mode(): ProxyAuthMode {
    return this.deps.mode;
  }

  /** The scheme that last worked with this proxy (the next connection leads with it). */
  remembered(proxy: ProxyServer): ProxyAuthScheme | undefined {
    return this.lastScheme.get(key(proxy));
  }

  succeeded(proxy: ProxyServer, scheme: ProxyAuthScheme): void {
    const k = key(proxy);
    this.lastScheme.delete(k);
    this.lastScheme.set(k, scheme);
    // Bounded: a handful of proxies at most; forget the oldest beyond 16.
    if (this.lastScheme.size > 16) this.lastScheme.delete(this.lastScheme.keys().next().value!);
  }

  forget(proxy: ProxyServer): void {
    this.lastScheme.delete(key(proxy));
  }

  /**
   * An exchange for the best scheme among `offered` (in preference order), or the reasons none
   * can be used. `offered` undefined: lead with the remembered scheme (no challenge seen yet).
   */
  async begin(
    proxy: ProxyServer,
    offered: ProxyAuthScheme[],
  ): Promise<{ exchange?: AuthExchange; unavailable: Unavailable[] }> {
    const unavailable: Unavailable[] = [];
    for (const scheme of SCHEME_PREFERENCE) {
      if (!offered.includes(scheme)) continue;
      const result = await this.exchangeFor(scheme, proxy);
      if ('reason' in result) unavailable.push(result);
      else return { exchange: result, unavailable };
    }
    return { unavailable };
  }

  private async exchangeFor(
    scheme: ProxyAuthScheme,
    proxy: ProxyServer,
  ): Promise<AuthExchange | Unavailable> {
    const { mode } = this.deps;
    if (mode === 'none')
      return { scheme, reason: 'proxy authentication is turned off (proxy authentication: none)' };
    if (scheme === 'Basic') {
      if (!proxy.auth) return { scheme, reason: 'no proxy user name and password are configured' };
      return this.basic(proxy.auth);
    }
    if (mode === 'basic')
      return { scheme, reason: `${scheme} is not allowed (proxy authentication: basic)` };
    if (scheme === 'NTLM') {
      if (!proxy.auth)
        return {
          scheme,
          reason:
            'NTLM needs a configured user name and password (DOMAIN\\user) on this computer; ask IT to offer Negotiate (Kerberos) on the proxy',
        };
      return this.ntlm(proxy.auth);
    }
    return this.negotiate(proxy);
  }

  private basic(auth: string): AuthExchange {
    let sent = false;
    const { user } = userPassword(auth);
    return {
      scheme: 'Basic',
      identity: () => user,
      respond: () => {
        if (sent) return Promise.resolve(undefined);
        sent = true;
        return Promise.resolve(basicOf(auth));
      },
      finish: () => Promise.resolve(),
      done: () => {},
    };
  }

  private ntlm(auth: string): AuthExchange {
    const { user, password } = userPassword(auth);
    const { now } = this.deps;
    const secrets = this.tokens();
    let leg = 0;
    return {
      scheme: 'NTLM',
      identity: () => user,
      respond: (challenge) => {
        leg++;
        if (leg === 1) return Promise.resolve(`NTLM ${ntlmNegotiate()}`);
        if (leg > 2 || !challenge) return Promise.resolve(undefined);
        const message = ntlmAuthenticate(parseNtlmChallenge(challenge), { user, password }, now());
        secrets.add(message);
        return Promise.resolve(`NTLM ${message}`);
      },
      finish: () => Promise.resolve(),
      done: () => secrets.forget(),
    };
  }

  /** The secrets of one exchange: registered as they are made, forgotten when it is done. */
  private tokens(): { add(secret: string): void; forget(): void } {
    const { onSecret, forgetSecret } = this.deps;
    const issued: string[] = [];
    return {
      add(secret) {
        issued.push(secret);
        onSecret(secret);
      },
      forget() {
        for (const secret of issued.splice(0)) forgetSecret?.(secret);
      },
    };
  }

  private async negotiate(proxy: ProxyServer): Promise<AuthExchange | Unavailable> {
    if (!this.deps.gssapi)
      return { scheme: 'Negotiate', reason: 'Negotiate (Kerberos) is not available here' };
    let gssapi: Gssapi;
    try {
      this.gssapiLoad ??= this.deps.gssapi();
      gssapi = await this.gssapiLoad;
    } catch (error) {
      return { scheme: 'Negotiate', reason: (error as Error).message };
    }
    const secrets = this.tokens();
    // The proxy's service principal is HTTP/<its host name> (RFC 4559), as the user's settings
    // name it: an IP address has no principal, so a proxy given by address gets none.
    const context = gssapi.client(`HTTP@${proxy.host}`);
    let started = false;
    return {
      scheme: 'Negotiate',
      identity: () => context.identity(),
      respond: async (challenge) => {
        if (started && !challenge) return undefined;
        started = true;
        const token = await context.step(challenge);
        secrets.add(token);
        return `Negotiate ${token}`;
      },
      finish: async (token) => {
        if (token) await context.step(token);
      },
      done: () => secrets.forget(),
    };
  }
}

function key(proxy: ProxyServer): string {
  return `${proxy.host}:${proxy.port}`;
}
