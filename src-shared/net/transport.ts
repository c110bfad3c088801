/**
 * The one way out of the process for every connection to the service and the relay: API calls
 * (`fetch`), the service's WebSocket and the relay's (`createSocket`). Each connection asks the
 * ProxyResolver (proxy.ts) how to reach its host, goes direct or through a CONNECT tunnel
 * (tunnel.ts), and trusts the same certificate authorities (trust.ts), read on the first TLS
 * connection (a run that speaks only plain http, the demo, never reads the system's store). What
 * was decided for each host is kept for the diagnostics (`decisions()`) and logged once per change.
 *
 * The proxy's credentials are registered with the SecretRegistry the moment they are known, so no
 * log line or error can show them.
 *
 * `fetch` is the small part of WHATWG fetch the service client uses (method, headers, a string
 * body, an AbortSignal, `redirect: 'error'`), over node:http(s) with the agents below; a failure
 * rejects like fetch does, a TypeError whose `cause` is the socket's (or the proxy's) error. It
 * answers with a LeanResponse: a Response without loading Node's fetch (src-shared/net/lean-fetch.ts).
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger, SecretRegistry } from '../process/log.ts';
import type { CreateSocket } from '../stream/socket.ts';
import { wsSocketFactory } from '../stream/ws-socket.ts';
import { describeProxy, type ProxyChoice, type ProxyResolver } from './proxy.ts';
import { ABANDON_OPTION, openTunnel, type AuthOutcome } from './tunnel.ts';
import { ProxyAuthenticator, type ProxyAuthMode, type ProxyAuthScheme } from './proxy-auth.ts';
import { loadGssapi, type Gssapi } from './gssapi.ts';
import type { Trust, TrustSource } from './trust.ts';
import { leanFetch } from './lean-fetch.ts';

/**
 * The whole CONNECT (reaching the proxy and its complete answer) must be done in this time, however
 * the proxy trickles its bytes; then it is reported unreachable or too slow, and retried. Shorter
 * than the API calls' time-out and the relay's connect timer (15 s each), so that a slow proxy is
 * named as such rather than as a slow service.
 */
const TUNNEL_DEADLINE_MS = 10_000;
/** The service's answers are small; a body above this is cut off as an error. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface NetTransportDeps {
  resolver: ProxyResolver;
  /** The CA file is checked when the source is made; the system store is read on first TLS use. */
  trust: TrustSource;
  logger: Logger;
  secrets: SecretRegistry;
  /** A body above this is cut off as an error (default 8 MiB). */
  maxBodyBytes?: number;
  /**
   * Keep a connection (a tunnel, a TLS session) open for the next request to the same host; the
   * relay's token checks are many, to a few hosts (default false: each request its own).
   */
  keepAlive?: boolean;
  /**
   * How a proxy's 407 is answered (proxy-auth.ts): `automatic` (Negotiate, NTLM, Basic, as the
   * proxy offers; the default), `basic` or `none`; and the loader of the Kerberos binding
   * (default: gssapi.ts `loadGssapi`, the optional `kerberos` package).
   */
  proxyAuth?: { mode: ProxyAuthMode; gssapi?: () => Promise<Gssapi> };
}

/** What the diagnostics show of the network decisions. */
export interface NetworkDecisions {
  proxySource: string;
  /** `scheme://host:port` -> `direct` or `proxy host:port`, as last decided. */
  routes: Record<string, string>;
  trust: string[];
  caProblem?: string;
  /** How the proxy authentication is set (`automatic`, `basic`, `none`). */
  proxyAuthMode: ProxyAuthMode;
  /** `host:port` of a proxy -> how the last tunnel through it authenticated (no secret). */
  proxyAuth: Record<string, string>;
}

/** `Negotiate as agent7@EXAMPLE.COM`, `NTLM as CORP\\agent7`, `Basic as agent7`: no secret. */
export function describeAuth(outcome: { scheme: string; identity?: string | undefined }): string {
  return outcome.identity ? `${outcome.scheme} as ${outcome.identity}` : outcome.scheme;
}

type ConnectOptions = http.ClientRequestArgs &
  tls.ConnectionOptions & { [ABANDON_OPTION]?: AbortSignal };
type Callback = (err: Error | null, stream: Duplex) => void;

/** `user:password`, the password alone and their Basic encoding are secrets. */
function registerAuth(secrets: SecretRegistry, auth: string): void {
  secrets.add(auth);
  secrets.add(auth.slice(auth.indexOf(':') + 1));
  secrets.add(Buffer.from(auth, 'utf8').toString('base64'));
}

export class NetTransport {
  readonly fetch: typeof fetch;
  readonly createSocket: CreateSocket;
  private readonly deps: NetTransportDeps;
  private readonly logger: Logger;
  private readonly routes = new Map<string, string>();
  private readonly authenticated = new Map<string, string>();
  private lastAuth: { scheme: ProxyAuthScheme; identity?: string } | undefined;
  private readonly authenticator: ProxyAuthenticator;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  /**
   * One TLS context for every connection of this transport, made on first use. Without it
   * tls.connect builds a context from the `ca` list on every connection: with the system's CAs
   * (about 700 certificates) that is 30 to 140 ms of blocked event loop per HTTPS request, which
   * delayed the next ring's card while a CRM lookup connected (bench/crm-lookup.ts).
   */
  private context: tls.SecureContext | undefined;

  constructor(deps: NetTransportDeps) {
    this.deps = deps;
    this.logger = deps.logger.child({ component: 'network' });
    for (const auth of deps.resolver.knownAuth ?? []) registerAuth(deps.secrets, auth);
    this.authenticator = new ProxyAuthenticator({
      mode: deps.proxyAuth?.mode ?? 'automatic',
      gssapi: deps.proxyAuth?.gssapi ?? (() => loadGssapi()),
      // Every token and NTLM message is a secret: no log line or error may show one.
      onSecret: (secret) => deps.secrets.add(secret),
      forgetSecret: (secret) => deps.secrets.remove(secret),
      now: () => Date.now(),
    });
    const connect = (secure: boolean, options: ConnectOptions, done: Callback) => {
      this.open(secure, options).then(
        (socket) => done(null, socket),
        (error: Error) => done(error, undefined as unknown as Duplex),
      );
      return undefined;
    };
    const agentOptions = { keepAlive: deps.keepAlive ?? false };
    this.httpAgent = new (class extends http.Agent {
      override createConnection(options: ConnectOptions, done?: Callback) {
        return connect(false, options, done ?? (() => {}));
      }
    })(agentOptions);
    this.httpsAgent = new (class extends https.Agent {
      override createConnection(options: ConnectOptions, done?: Callback) {
        return connect(true, options, done ?? (() => {}));
      }
    })(agentOptions);
    this.fetch = ((input: string | URL | Request, init?: RequestInit) =>
      this.request(input, init)) as typeof fetch;
    // No `ca` here: every socket goes through an agent below, whose open() sets the trust.
    this.createSocket = wsSocketFactory({ agent: (url) => this.agentFor(url) });
  }

  /** For the diagnostics: these read the system store if no TLS connection has yet. */
  decisions(): NetworkDecisions {
    return {
      proxySource: this.deps.resolver.source,
      routes: Object.fromEntries(this.routes),
      trust: [...this.trust().decisions],
      ...(this.deps.trust.problem !== undefined && { caProblem: this.deps.trust.problem }),
      proxyAuthMode: this.authenticator.mode,
      proxyAuth: Object.fromEntries(this.authenticated),
    };
  }

  /**
   * How the last tunnel through a proxy authenticated (the scheme, and who when known), for the
   * status; undefined when no proxy asked for a sign-in.
   */
  proxyAuthInUse(): { scheme: ProxyAuthScheme; identity?: string } | undefined {
    return this.lastAuth;
  }

  /** The trusted CAs, read on the first call (the first TLS connection), said once in the log. */
  private trust(): Trust {
    const first = !this.deps.trust.loaded;
    const trust = this.deps.trust.get();
    if (first) this.logger.info('trust', { decisions: trust.decisions });
    return trust;
  }

  /**
   * The agent this transport's requests go through (proxy, CONNECT, trusted CAs), for a client
   * that makes its own requests: electron-updater's (src-main/electron/update-network.ts).
   */
  agentFor(url: URL): http.Agent {
    return url.protocol === 'https:' || url.protocol === 'wss:' ? this.httpsAgent : this.httpAgent;
  }

  /** A connected socket to options.host:port, direct or through the proxy, TLS when `secure`. */
  private async open(secure: boolean, requested: ConnectOptions): Promise<Duplex> {
    const { [ABANDON_OPTION]: abandon, ...options } = requested;
    const host = String(options.host ?? 'localhost').replace(/^\[|\]$/g, '');
    const port = Number(options.port ?? (secure ? 443 : 80));
    const target = new URL(
      `${secure ? 'https' : 'http'}://${net.isIPv6(host) ? `[${host}]` : host}:${port}/`,
    );
    const choice = await this.deps.resolver.resolve(target);
    this.note(target, choice);
    if (choice.kind === 'direct')
      return secure ? tls.connect(this.tlsOptions(options, host)) : net.connect({ host, port });
    if (choice.auth) registerAuth(this.deps.secrets, choice.auth);
    const tunnel = await openTunnel(
      choice,
      { host, port },
      {
        deadlineMs: TUNNEL_DEADLINE_MS,
        signal: abandon,
        auth: this.authenticator,
        onAuthenticated: (outcome) => this.noteAuth(outcome),
      },
    );
    if (!secure) return tunnel;
    const { host: _h, port: _p, ...rest } = this.tlsOptions(options, host);
    return tls.connect({ ...rest, socket: tunnel });
  }

  /** A TLS connection's options: the one context of the trusted CAs (asked for only here). */
  private tlsOptions(options: ConnectOptions, host: string): tls.ConnectionOptions {
    const { ca: _ca, ...withoutCa } = options;
    const { ca } = this.trust();
    return {
      ...withoutCa,
      ...(ca && { secureContext: this.secureContext(ca) }),
      ...(!net.isIP(host) && { servername: options.servername || host }),
    } as tls.ConnectionOptions;
  }

  private secureContext(ca: string[]): tls.SecureContext {
    this.context ??= tls.createSecureContext({ ca });
    return this.context;
  }

  private note(target: URL, choice: ProxyChoice): void {
    const key = `${target.protocol}//${target.host}`;
    const via = choice.kind === 'direct' ? 'direct' : `proxy ${describeProxy(choice)}`;
    if (this.routes.get(key) === via) return;
    this.routes.set(key, via);
    this.logger.info('route', { target: key, via, source: this.deps.resolver.source });
  }

  /**
   * Which scheme (and identity) the proxy accepted, logged when it changes, with what the
   * handshake took (legs, connections, ms); never a token.
   */
  private noteAuth(outcome: AuthOutcome): void {
    const said = describeAuth(outcome);
    this.lastAuth = {
      scheme: outcome.scheme,
      ...(outcome.identity !== undefined && { identity: outcome.identity }),
    };
    if (this.authenticated.get(outcome.proxy) === said) return;
    this.authenticated.delete(outcome.proxy);
    this.authenticated.set(outcome.proxy, said);
    if (this.authenticated.size > 16)
      this.authenticated.delete(this.authenticated.keys().next().value!);
    this.logger.info('proxy-auth', {
      proxy: outcome.proxy,
      scheme: outcome.scheme,
      ...(outcome.identity !== undefined && { as: outcome.identity }),
      legs: outcome.legs,
      connections: outcome.connections,
      ms: outcome.ms,
    });
  }

  private request(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    return leanFetch(input, init, {
      agentFor: (secure) => (secure ? this.httpsAgent : this.httpAgent),
      withSignal: (signal) => ({ [ABANDON_OPTION]: signal }),
      maxBodyBytes: this.deps.maxBodyBytes ?? MAX_BODY_BYTES,
    });
  }
}
