/**
 * The settings' network choices (proxyMode, proxyUrl, caFile) turned into a NetTransport, the same
 * way for the tray app and the headless runner; only "the system's proxy" differs between them:
 * the app asks Chromium (`systemProxy`, Electron's session.resolveProxy: PAC, WPAD, the OS
 * settings), the runner reads HTTPS_PROXY / NO_PROXY (`env`).
 *
 * A proxy's user name and password come from `proxyCredentials` (the app: the system keychain,
 * account `proxy@host:port`), or from HTTPS_PROXY's `user:password@` for the runner; never from a
 * settings file.
 */
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import type { Settings } from '../settings/types.ts';
import type { TransportSettings } from '../settings/changes.ts';
import {
  envProxyResolver,
  fixedProxyResolver,
  pacProxyResolver,
  parseProxyUrl,
  ProxyConfigError,
  type ProxyChoice,
  type ProxyResolver,
} from '../../../src-shared/net/proxy.ts';
import { NetTransport } from '../../../src-shared/net/transport.ts';
import { english, phrase } from '../../../src-shared/i18n/phrase.ts';
import { lazyTrust } from '../../../src-shared/net/trust.ts';

export interface NetworkDeps {
  logger: Logger;
  secrets: SecretRegistry;
  readFile: (path: string) => string;
  /** The app: Chromium's answer for a URL in PAC words (`PROXY host:port; DIRECT`). */
  systemProxy?: (url: string) => Promise<string>;
  /** The runner: its environment (HTTPS_PROXY, NO_PROXY, and the lowercase ones). */
  env?: Record<string, string | undefined>;
  /** `user:password` for a proxy, or null when none is kept for it. */
  proxyCredentials?: (proxy: { host: string; port: number }) => Promise<string | null>;
  /**
   * Who manages this computer, when the organisation's policy sets the proxy setting: a proxy it
   * asks for that cannot be used is then said to be the policy's.
   */
  proxyPolicy?: string | undefined;
}

/** The keychain account of a proxy's `user:password`. */
export function proxyAccount(proxy: { host: string; port: number }): string {
  return `proxy@${proxy.host}:${proxy.port}`;
}

/** Adds the kept credentials (if any, and if the choice has none) to a resolver's choices. */
function withCredentials(resolver: ProxyResolver, deps: NetworkDeps): ProxyResolver {
  const lookup = deps.proxyCredentials;
  if (!lookup) return resolver;
  return {
    source: resolver.source,
    async resolve(url) {
      const choice: ProxyChoice = await resolver.resolve(url);
      if (choice.kind === 'direct' || choice.auth) return choice;
      let auth: string | null = null;
      try {
        auth = await lookup(choice);
      } catch (error) {
        deps.logger.warn('the proxy credentials cannot be read from the keychain', {
          proxy: `${choice.host}:${choice.port}`,
          error,
        });
      }
      if (!auth) return choice;
      deps.secrets.add(auth);
      return { ...choice, auth };
    },
  };
}

function resolverFor(
  settings: Pick<Settings, 'proxyMode' | 'proxyUrl'>,
  deps: NetworkDeps,
): ProxyResolver {
  if (settings.proxyMode === 'none') return fixedProxyResolver(null, 'none (proxy setting: none)');
  if (settings.proxyMode === 'manual') {
    // Fail closed: a proxy was asked for; going direct would go around it.
    if (!settings.proxyUrl) throw unusableManualProxy(deps.proxyPolicy);
    const server = parseProxyUrl(settings.proxyUrl);
    return fixedProxyResolver(server, `setting (${server.host}:${server.port})`);
  }
  if (deps.systemProxy) return pacProxyResolver(deps.systemProxy);
  return envProxyResolver(deps.env ?? {});
}

/** "manual" without a usable address, in words naming the policy when it is the policy's. */
function unusableManualProxy(managedBy: string | undefined): ProxyConfigError {
  const words =
    managedBy === undefined
      ? {
          reason: [phrase('status.proxy-manual-unusable')],
          remedy: [phrase('status.proxy-manual-unusable-remedy')],
        }
      : {
          reason: [phrase('status.policy-proxy-unusable', { managedBy })],
          remedy: [phrase('status.policy-proxy-unusable-remedy', { managedBy })],
        };
  return new ProxyConfigError(english(words.reason), words);
}

/**
 * The transport for these settings. Throws ProxyConfigError for an unusable HTTPS_PROXY (the
 * runner refuses to start rather than go around an administrator's proxy).
 */
export function transportFor(
  // proxyAuth may be left out (going direct, tests): automatic, the default.
  settings: Omit<TransportSettings, 'proxyAuth'> & Partial<Pick<TransportSettings, 'proxyAuth'>>,
  deps: NetworkDeps,
): NetTransport {
  let resolver: ProxyResolver;
  try {
    resolver = withCredentials(resolverFor(settings, deps), deps);
  } catch (error) {
    if (error instanceof ProxyConfigError) throw error;
    throw new ProxyConfigError(error instanceof Error ? error.message : String(error));
  }
  // The CA file is read and checked now; the system's store on the first TLS connection (the
  // transport logs 'trust' with every decision then).
  const trust = lazyTrust({ caFile: settings.caFile, readFile: deps.readFile });
  if (trust.problem) deps.logger.warn('the CA file is not used', { problem: trust.problem });
  const transport = new NetTransport({
    resolver,
    trust,
    logger: deps.logger,
    secrets: deps.secrets,
    // Negotiate through the optional kerberos package, loaded at the first 407 that offers it.
    proxyAuth: { mode: settings.proxyAuth ?? 'automatic' },
  });
  deps.logger.info('network', {
    proxy: resolver.source,
    proxyAuth: settings.proxyAuth ?? 'automatic',
    caFile: trust.caFile,
    trust: 'the system store and Node roots are read at the first TLS connection',
  });
  return transport;
}
