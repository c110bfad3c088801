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
import { ABANDON_OPTION, openTunnel } from './tunnel.ts';
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
}

/** What the diagnostics show of the network decisions. */
export interface NetworkDecisions {
  proxySource: string;
  /** `scheme://host:port` -> `direct` or `proxy host:port`, as last decided. */
  routes: Record<string, string>;
  trust: string[];
  caProblem?: string;
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
    };
  }

  /** The trusted CAs, read on the first call (the first TLS connection), said once in the log. */
  private trust(): Trust {
    const first = !this.deps.trust.loaded;
    const trust = this.deps.trust.get();
    if (first) this.logger.info('trust', { decisions: trust.decisions });
    return trust;
  }

  private agentFor(url: URL): http.Agent {
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
      { deadlineMs: TUNNEL_DEADLINE_MS, signal: abandon },
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

  private request(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    return leanFetch(input, init, {
      agentFor: (secure) => (secure ? this.httpsAgent : this.httpAgent),
      withSignal: (signal) => ({ [ABANDON_OPTION]: signal }),
      maxBodyBytes: this.deps.maxBodyBytes ?? MAX_BODY_BYTES,
    });
  }
}
