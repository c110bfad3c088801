/**
 * Which proxy a connection goes through. One `ProxyResolver` port answers "how do I reach this
 * URL?" for every connection the app makes (API calls, the service's WebSocket, the relay's): the
 * Electron app asks Chromium (`session.resolveProxy`, which runs the system's PAC script or WPAD)
 * and answers in Chromium's PAC words (`parsePacResult`), the headless runner reads
 * HTTPS_PROXY / NO_PROXY (`envProxyResolver`), and an explicit proxy setting is `fixedProxyResolver`.
 *
 * Only HTTP proxies that tunnel with CONNECT are used (tunnel.ts); the proxy's user name and
 * password (Basic) are secrets: `ProxyChoice.auth` is never logged, and `describeProxy` shows the
 * host and port alone.
 */
import type { Words } from '../i18n/phrase.ts';

export interface ProxyServer {
  host: string;
  port: number;
  /** `user:password` for Basic authentication (a secret). */
  auth?: string;
}

export type ProxyChoice = { kind: 'direct' } | ({ kind: 'proxy' } & ProxyServer);

export const DIRECT: ProxyChoice = { kind: 'direct' };

export interface ProxyResolver {
  /** How to reach `url` (https:, wss:, http: or ws:). Never rejects: falls back on direct. */
  resolve(url: URL): Promise<ProxyChoice>;
  /** Where the answer comes from, for the diagnostics and the log (no credentials). */
  readonly source: string;
  /** Credentials known up front (HTTPS_PROXY's user:password): registered as secrets at once. */
  readonly knownAuth?: string[];
}

/** `host:port` of a choice, or 'direct'; never the credentials. */
export function describeProxy(choice: ProxyChoice): string {
  return choice.kind === 'direct' ? 'direct' : `${choice.host}:${choice.port}`;
}

export class ProxyConfigError extends Error {
  /** The reason and remedy as phrases, for the edge to say in the user's language (else: message). */
  readonly words?: { reason: Words; remedy: Words };

  constructor(message: string, words?: { reason: Words; remedy: Words }) {
    super(message);
    this.name = 'ProxyConfigError';
    if (words) this.words = words;
  }
}

/**
 * `http://[user:password@]host[:port]` (or a bare `host:port`, as HTTPS_PROXY is often written)
 * as a proxy server. Throws ProxyConfigError, without the credentials in its message.
 */
export function parseProxyUrl(raw: string): ProxyServer {
  const text = raw.trim();
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    throw new ProxyConfigError('The proxy is not an address like http://proxy.example.com:3128.');
  }
  if (url.protocol !== 'http:')
    throw new ProxyConfigError(
      `The proxy ${url.host} must be an http:// proxy (${url.protocol.replace(':', '')} proxies are not supported).`,
    );
  if (!url.hostname) throw new ProxyConfigError('The proxy address has no host.');
  const server: ProxyServer = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : 80,
  };
  if (url.username || url.password)
    server.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return server;
}

function authsOf(...servers: Array<ProxyServer | null>): string[] {
  return servers.flatMap((s) => (s?.auth ? [s.auth] : []));
}

/** Always the same proxy (the explicit proxy setting), or always direct. */
export function fixedProxyResolver(server: ProxyServer | null, source = 'setting'): ProxyResolver {
  const choice: ProxyChoice = server ? { kind: 'proxy', ...server } : DIRECT;
  return { source, knownAuth: authsOf(server), resolve: () => Promise.resolve(choice) };
}

function defaultPort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
}

/**
 * One NO_PROXY entry against a host and port, the way curl reads it: `*` matches everything;
 * `example.com` and `.example.com` match the domain and its subdomains; `host:port` only that
 * port; an IP address only itself; `10.0.0.0/8` a range. Loopback is NOT bypassed unless listed
 * (`localhost,127.0.0.1`): what is not in NO_PROXY goes to the proxy.
 */
function noProxyMatches(entry: string, host: string, port: number): boolean {
  let pattern = entry.trim().toLowerCase();
  if (!pattern) return false;
  if (pattern === '*') return true;
  const portMatch = /^(.*[^:\]]):(\d+)$/.exec(pattern) ?? /^(\[.*\]):(\d+)$/.exec(pattern);
  if (portMatch) {
    if (Number(portMatch[2]) !== port) return false;
    pattern = portMatch[1] ?? '';
  }
  pattern = pattern.replace(/^\[|\]$/g, '');
  const cidr = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(pattern);
  if (cidr) return inIpv4Range(host, cidr[1] ?? '', Number(cidr[2]));
  if (pattern.startsWith('*.')) pattern = pattern.slice(1);
  if (pattern.startsWith('.')) return host.endsWith(pattern) || host === pattern.slice(1);
  return host === pattern || host.endsWith(`.${pattern}`);
}

function ipv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

function inIpv4Range(host: string, base: string, bits: number): boolean {
  const h = ipv4(host);
  const b = ipv4(base);
  if (h === undefined || b === undefined || bits < 0 || bits > 32) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(h / size) === Math.floor(b / size);
}

export function bypassesProxy(noProxy: string, url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = defaultPort(url);
  return noProxy.split(/[,\s]+/).some((entry) => noProxyMatches(entry, host, port));
}

/**
 * HTTPS_PROXY / HTTP_PROXY / ALL_PROXY and NO_PROXY (each also lowercase, the lowercase one first,
 * as curl does): https: and wss: addresses use HTTPS_PROXY, http: and ws: HTTP_PROXY, both fall
 * back on ALL_PROXY. A malformed variable throws ProxyConfigError naming the variable (the runner
 * refuses to start rather than go around the proxy).
 */
export function envProxyResolver(env: Record<string, string | undefined>): ProxyResolver {
  const read = (name: string) => env[name.toLowerCase()] ?? env[name];
  const parse = (name: string): ProxyServer | null => {
    const value = read(name)?.trim();
    if (!value) return null;
    try {
      return parseProxyUrl(value);
    } catch (error) {
      throw new ProxyConfigError(`${name}: ${(error as Error).message}`);
    }
  };
  const all = parse('ALL_PROXY');
  const secure = parse('HTTPS_PROXY') ?? all;
  const plain = parse('HTTP_PROXY') ?? all;
  const noProxy = read('NO_PROXY') ?? '';
  const source = secure || plain ? 'environment (HTTPS_PROXY / NO_PROXY)' : 'none (no HTTPS_PROXY)';
  return {
    source,
    knownAuth: authsOf(secure, plain),
    resolve(url) {
      const server = url.protocol === 'https:' || url.protocol === 'wss:' ? secure : plain;
      if (!server || bypassesProxy(noProxy, url)) return Promise.resolve(DIRECT);
      return Promise.resolve({ kind: 'proxy', ...server });
    },
  };
}

/**
 * Chromium's answer to resolveProxy, e.g. `PROXY proxy.corp:8080; DIRECT`: the first entry we can
 * use. PROXY and HTTP are HTTP proxies; DIRECT is direct; SOCKS and HTTPS proxies are skipped (not
 * supported by the tunnel), and when nothing usable is left the answer is direct.
 */
export function parsePacResult(text: string): ProxyChoice {
  for (const raw of text.split(';')) {
    const [kind = '', where = ''] = raw.trim().split(/\s+/, 2);
    const type = kind.toUpperCase();
    if (type === 'DIRECT') return DIRECT;
    if ((type === 'PROXY' || type === 'HTTP') && where) {
      try {
        const { host, port } = parseProxyUrl(where);
        return { kind: 'proxy', host, port };
      } catch {
        continue;
      }
    }
  }
  return DIRECT;
}

/**
 * The system's proxy through a `resolveProxy(url)` that answers in PAC words (Electron's
 * `session.resolveProxy`). Chromium's answer carries no credentials: src-main/core/net/network.ts adds those kept
 * in the keychain for the proxy it names.
 */
export function pacProxyResolver(resolveProxy: (url: string) => Promise<string>): ProxyResolver {
  return {
    source: 'system (PAC / WPAD / system settings)',
    async resolve(url) {
      // Chromium resolves http(s) URLs; a WebSocket goes where its https/http twin goes.
      const asked = new URL(url.href.replace(/^ws(s?):/, 'http$1:'));
      try {
        return parsePacResult(await resolveProxy(asked.href));
      } catch {
        return DIRECT;
      }
    },
  };
}
