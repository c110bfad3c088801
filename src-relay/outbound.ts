/**
 * The relay's one way out (the architecture's rule: every connection goes through the one
 * transport, src-shared/net/transport.ts, as the desktop's and the headless runner's do): the
 * token checks at each tenant's phone system (auth.ts), a gateway's API calls and event stream
 * (gateway/), and the OpenID Connect provider's discovery document and keys (users/oidc.ts).
 *
 * Built once at start (cli.ts) from the environment and the config, the way the headless runner
 * builds its own: HTTPS_PROXY (https and wss addresses), HTTP_PROXY (http and ws), ALL_PROXY and
 * NO_PROXY, each also lowercase, choose a forward proxy, reached with CONNECT tunnels; the
 * certificate authorities trusted are Node's roots, the system's store, NODE_EXTRA_CA_CERTS and
 * the PEM file `outbound.caFile` (RELAY_CA_FILE) names (a private phone system's CA, or a
 * TLS-inspecting proxy's). Redis is not HTTP: the storage connects to it directly.
 *
 * check-config.ts says what is wrong with these before anything starts (a malformed proxy
 * variable, a CA file that is missing or holds no certificate), so a relay never starts going
 * around the proxy or without the CA it was given.
 */
import type { Logger, SecretRegistry } from '../src-shared/process/log.ts';
import { envProxyResolver, fixedProxyResolver } from '../src-shared/net/proxy.ts';
import { NetTransport } from '../src-shared/net/transport.ts';
import { lazyTrust, readCaText } from '../src-shared/net/trust.ts';
import type { RelayConfig } from './config.ts';

/**
 * How the relay's transport differs from the desktop's: the answers it reads (a token check, a
 * token, an extension list, a discovery document) are small, so a body above 1 MiB is an error;
 * and its token checks are many, to a few hosts, so a connection is kept for the next.
 */
const RELAY_TUNING = { maxBodyBytes: 1024 * 1024, keepAlive: true };

/**
 * The relay's transport: the environment's proxy and the config's CA file. Throws (with the
 * variable's or the setting's name) where check-config.ts reports an error.
 */
export function relayTransport(
  config: Pick<RelayConfig, 'outbound'>,
  env: NodeJS.ProcessEnv,
  deps: { logger: Logger; secrets: SecretRegistry },
): NetTransport {
  const resolver = envProxyResolver(env);
  const trust = lazyTrust({ caFile: config.outbound.caFile ?? '', readFile: readCaText });
  if (trust.problem) throw new Error(`outbound.caFile: ${trust.problem}`);
  const logger = deps.logger.child({ component: 'outbound' });
  logger.info('network', { proxy: resolver.source, caFile: trust.caFile });
  return new NetTransport({ resolver, trust, logger, secrets: deps.secrets, ...RELAY_TUNING });
}

/**
 * The same transport going direct, trusting Node's roots and the system's store: what startRelay
 * uses when its caller gives none (tests and benchmarks that start the relay in-process).
 */
export function directTransport(deps: { logger: Logger; secrets: SecretRegistry }): NetTransport {
  return new NetTransport({
    resolver: fixedProxyResolver(null, 'none (no transport given: direct)'),
    trust: lazyTrust({ caFile: '', readFile: readCaText }),
    logger: deps.logger.child({ component: 'outbound' }),
    secrets: deps.secrets,
    ...RELAY_TUNING,
  });
}
