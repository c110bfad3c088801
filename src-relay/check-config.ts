/**
 * What the schema (config.ts) cannot know: whether the files the config names can be used, whether
 * the TLS certificate is still valid, and settings that are allowed but risky. `npm run relay --
 * --check-config` prints the result (and also tries the Redis address); a normal start runs the
 * same checks, refuses to start on an error and logs each warning.
 *
 * Nothing here prints a secret: tenants are listed with the number of their secrets, a Redis URL
 * without its password.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { RelayConfig } from './config.ts';
import { EXAMPLE_SECRET } from './config.ts';
import { fileStartupError, printableRedisUrl } from './startup-errors.ts';
import { describeRedisStorage } from './store/redis-connection.ts';
import { isLoopbackHost, isSecureOrLoopback } from '../src-shared/net/loopback.ts';
import { readableByOthers, readGatewayCredential, sourceOf } from './gateway/credential.ts';
import { codeKeySource, readCodeKey } from './users/code-key.ts';
import { envProxyResolver } from '../src-shared/net/proxy.ts';
import { readCaFile, readCaText } from '../src-shared/net/trust.ts';
import { wireFor } from '../src-shared/wire/index.ts';

export interface ConfigReport {
  /** The relay refuses to start with any of these. */
  errors: string[];
  /** Allowed, but an administrator should know. */
  warnings: string[];
  /** What the relay will do, one line per part (no secrets). */
  summary: string[];
}

/** A certificate that expires sooner than this is warned about. */
const EXPIRY_WARNING_MS = 14 * 24 * 3600_000;
/** Shorter webhook secrets are warned about (the service's own are longer). */
const SHORT_SECRET = 16;

export function checkConfig(
  config: RelayConfig,
  now: number,
  env: NodeJS.ProcessEnv = {},
): ConfigReport {
  const report: ConfigReport = { errors: [], warnings: [], summary: [] };
  const scheme = config.tls ? 'https' : 'http';
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  report.summary.push(`listen: ${scheme}://${host}:${config.port}`);
  const local = isLoopbackHost(config.host);
  checkTls(config, now, report, local);
  checkStorage(config, report, local);
  checkTenants(config, report, local);
  checkUsers(config, report, env);
  checkGateways(config, report, env);
  checkOutbound(config, report, env);
  return report;
}

function checkTls(config: RelayConfig, now: number, report: ConfigReport, local: boolean): void {
  if (!config.tls) {
    report.summary.push('tls: none (plain HTTP; terminate TLS in a reverse proxy in front)');
    if (!local && !config.trustProxy)
      report.warnings.push(
        `host ${config.host} serves plain HTTP beyond this computer and trustProxy is false: desktops refuse a ws:// relay that is not on their own computer, so give the relay tls.certFile/tls.keyFile, or put a TLS-terminating proxy in front and set trustProxy`,
      );
    return;
  }
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(config.tls.certFile);
  } catch (err) {
    report.errors.push(fileStartupError('tls.certFile', config.tls.certFile, err).message);
    return;
  }
  try {
    key = readFileSync(config.tls.keyFile);
  } catch (err) {
    report.errors.push(fileStartupError('tls.keyFile', config.tls.keyFile, err).message);
    return;
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    report.errors.push(
      `tls: the certificate (${config.tls.certFile}) and key (${config.tls.keyFile}) cannot be used together: ${(err as Error).message.slice(0, 160)}. Both must be PEM, and the key must be the certificate's own.`,
    );
    return;
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    report.errors.push(
      `tls.certFile: ${config.tls.certFile} is not a PEM certificate (${(err as Error).message.slice(0, 120)}).`,
    );
    return;
  }
  const notAfter = Date.parse(x509.validTo);
  const notBefore = Date.parse(x509.validFrom);
  const names = x509.subjectAltName ?? x509.subject.replace(/\n/g, ', ');
  report.summary.push(`tls: ${config.tls.certFile} for ${names}, valid until ${x509.validTo}`);
  if (notAfter <= now)
    report.errors.push(
      `tls.certFile: the certificate ${config.tls.certFile} expired on ${x509.validTo}; desktops refuse it. Install a renewed certificate.`,
    );
  else if (notBefore > now)
    report.errors.push(
      `tls.certFile: the certificate ${config.tls.certFile} is not valid before ${x509.validFrom} (check this computer's clock).`,
    );
  else if (notAfter - now < EXPIRY_WARNING_MS)
    report.warnings.push(
      `tls.certFile: the certificate ${config.tls.certFile} expires on ${x509.validTo}; renew it before then.`,
    );
}

function checkStorage(config: RelayConfig, report: ConfigReport, local: boolean): void {
  const storage = config.storage;
  if (storage.kind === 'redis') {
    const prefix = storage.keyPrefix !== undefined ? ` (key prefix "${storage.keyPrefix}")` : '';
    const replicas =
      storage.minReplicas > 0
        ? `, a webhook answered once ${storage.minReplicas} replica(s) have it (within ${storage.replicaTimeoutMs} ms)`
        : '';
    const where =
      storage.sentinel || storage.cluster
        ? describeRedisStorage(storage)
        : `redis at ${printableRedisUrl(storage.url!)}`;
    report.summary.push(`storage: ${where}${prefix}${replicas}`);
    if (storage.sentinel && storage.sentinel.nodes.length < 3)
      report.warnings.push(
        `storage.sentinel.nodes: ${storage.sentinel.nodes.length} sentinel(s) given; give all of them (at least 3 run, so that a majority survives one's loss), since the relay asks the next one when one does not answer`,
      );
    if (storage.cluster && storage.keyPrefix && /[{}]/.test(storage.keyPrefix))
      report.warnings.push(
        `storage.keyPrefix "${storage.keyPrefix}" has a { or }: in a Redis Cluster the first {...} of a key chooses its slot, so every tenant's keys would hash by the prefix's braces (or none) instead of {<tenant>}: all tenants in one slot, on one node. Use a prefix without braces.`,
      );
    if ((storage.sentinel || storage.cluster) && storage.minReplicas === 0)
      report.warnings.push(
        'storage.minReplicas is 0: a webhook acknowledged by the old primary just before a failover can be lost (not yet on the replica that is promoted); set it to 1 (RELAY_REDIS_MIN_REPLICAS=1)',
      );
    return;
  }
  if (!storage.snapshotFile) {
    report.summary.push('storage: memory, no snapshot (one instance only)');
    if (!local)
      report.warnings.push(
        'storage: the memory store without snapshotFile loses what it holds when the relay restarts (desktops get a gap notice); set storage.snapshotFile, or use redis for several instances',
      );
    return;
  }
  report.summary.push(`storage: memory, snapshot ${storage.snapshotFile} (one instance only)`);
  const folder = dirname(storage.snapshotFile);
  try {
    if (!statSync(folder).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    accessSync(folder, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    report.errors.push(
      `storage.snapshotFile: the relay cannot write into ${folder} (${code === 'ENOENT' ? 'it does not exist' : code === 'ENOTDIR' ? 'not a folder' : "no write permission for the relay's user"}); create the folder for the relay's user.`,
    );
    return;
  }
  try {
    accessSync(storage.snapshotFile, constants.R_OK | constants.W_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      report.errors.push(
        `storage.snapshotFile: the relay's user may not read and write ${storage.snapshotFile} (check its owner and mode).`,
      );
  }
}

function checkUsers(config: RelayConfig, report: ConfigReport, env: NodeJS.ProcessEnv): void {
  if (!Object.values(config.tenants).some((t) => t.access === 'users')) return;
  const source = codeKeySource(config.users);
  if (source === null)
    report.warnings.push(
      'users.codeKeyFile (or users.codeKeyEnv) is not set: enrolment codes are stored as their plain SHA-256, and a copy of the users file or of Redis can be searched for the pending ones within their lifetime (hours with rented GPUs). Put a random key in a file readable by the relay only (openssl rand -base64 32 > /etc/screenpop-relay/code.key; chmod 600) and name it in users.codeKeyFile; codes issued before still enrol until they expire.',
    );
  else
    try {
      readCodeKey(config.users, env);
      report.summary.push(`enrolment codes: stored as HMAC-SHA-256 under the key of ${source}`);
      if (config.users.codeKeyFile !== undefined && readableByOthers(config.users.codeKeyFile))
        report.warnings.push(
          `users.codeKeyFile ${config.users.codeKeyFile} may be read by other users of this computer: make it readable by the relay's user only (chmod 600)`,
        );
    } catch (err) {
      report.errors.push((err as Error).message);
    }
  if (config.storage.kind === 'redis') {
    report.summary.push('users: in Redis beside the events (relay users add|code|revoke|list)');
    return;
  }
  const file = config.users.file!;
  report.summary.push(`users: ${file} (relay users add|code|revoke|list)`);
  const folder = dirname(file);
  try {
    accessSync(folder, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    report.errors.push(
      `users.file: the relay cannot write into ${folder} (${code === 'ENOENT' ? 'it does not exist' : "no write permission for the relay's user"}); create the folder for the relay's user.`,
    );
  }
}

function checkTenants(config: RelayConfig, report: ConfigReport, local: boolean): void {
  for (const [name, tenant] of Object.entries(config.tenants)) {
    const count = tenant.secrets.length;
    // What the phone system's webhooks need said (src-shared/wire/): its name, the secret it
    // generates, a signature without a time.
    const wire = wireFor(tenant.phoneSystem);
    const { generatedSecret, replayableFrom } = wire.webhook;
    const from = tenant.allowFrom?.length
      ? `, webhooks from ${tenant.allowFrom.join(' ')} only`
      : '';
    report.summary.push(
      `tenant ${name}: ${tenant.baseUrl}${wire.vendorName ? ` (${wire.vendorName})` : ''}, ${count} webhook secret${count === 1 ? '' : 's'}${from}, ${tenant.access === 'users' ? "the relay's users only, each their own calls" : 'any service token of the tenant'}`,
    );
    const env = `RELAY_TENANT_${name.toUpperCase().replace(/[-.]/g, '_')}_SECRETS`;
    if (tenant.secrets.includes(EXAMPLE_SECRET)) {
      const words = `tenants.${name}.secrets holds the example secret of deploy/relay/relay.json, which anyone can read: with it anyone could sign webhooks and make desktops pop calls that never rang. Put the tenant's webhook secret from the admin console there (or in ${env})`;
      if (local) report.warnings.push(words);
      else report.errors.push(`${words}; the relay does not serve beyond this computer with it.`);
    } else if (generatedSecret && tenant.secrets.some((s) => s.length !== generatedSecret.chars))
      report.warnings.push(
        `tenants.${name}.secrets has a secret that is not ${generatedSecret.chars} characters long: a ${wire.vendorName ?? 'phone system'} webhook's Secret is the ${generatedSecret.chars}-character key ${generatedSecret.shownAt}; copy all of it, or no delivery will be accepted`,
      );
    else if (tenant.secrets.some((s) => s.length < SHORT_SECRET))
      report.warnings.push(
        `tenants.${name}.secrets has a secret shorter than ${SHORT_SECRET} characters; use the one the admin console generates`,
      );
    if (replayableFrom && count > 0 && !tenant.allowFrom?.length)
      report.warnings.push(
        `tenants.${name} takes ${wire.vendorName ?? 'phone system'} webhooks from anywhere: ${replayableFrom} signs a delivery without a time, so one captured on the way can be sent again at any time and still passes the signature (the relay refuses copies of a ring for a week and stores a repeated status once). Name the addresses ${replayableFrom} sends from in tenants.${name}.allowFrom (its public address, or a CIDR range)`,
      );
    const url = new URL(tenant.baseUrl);
    // baseUrl is http(s) (config.ts): this is plain http to another computer.
    if (!isSecureOrLoopback(url))
      report.warnings.push(
        `tenants.${name}.baseUrl is plain http: desktops' access tokens would cross the network unencrypted when the relay checks them; use https`,
      );
  }
}

/** Gateway mode: where each tenant's key and secret come from, and that they are there. */
function checkGateways(config: RelayConfig, report: ConfigReport, env: NodeJS.ProcessEnv): void {
  for (const [name, tenant] of Object.entries(config.tenants)) {
    const gateway = tenant.gateway;
    if (!gateway) continue;
    const ways = [gateway.stream && 'its own stream', tenant.secrets.length > 0 && 'webhooks']
      .filter(Boolean)
      .join(' and ');
    report.summary.push(
      `tenant ${name}: gateway (the relay holds the API credential; events from ${ways}${gateway.stream && tenant.secrets.length > 0 ? ', each stored once' : ''}); key from ${sourceOf(name, gateway, 'apiKey')}, secret from ${sourceOf(name, gateway, 'secret')}`,
    );
    try {
      readGatewayCredential(name, gateway, env);
    } catch (err) {
      report.errors.push((err as Error).message);
      continue;
    }
    if (gateway.secretFile !== undefined && readableByOthers(gateway.secretFile))
      report.warnings.push(
        `tenants.${name}.gateway.secretFile ${gateway.secretFile} may be read by other users of this computer: make it readable by the relay's user only (chmod 600)`,
      );
    // Several instances on Redis share one stream by a lease (docs/relay-protocol.md 2.4.1): what
    // rings while another instance takes the stream over reaches them only by webhook, unless
    // the phone system can be asked for the calls still ringing (a Yeastar's call/query).
    if (
      config.storage.kind === 'redis' &&
      gateway.stream &&
      tenant.secrets.length === 0 &&
      wireFor(tenant.phoneSystem).api.calls !== true
    )
      report.warnings.push(
        `tenants.${name}: a gateway stream without webhooks (no secrets) on Redis: with several relay instances one holds the stream, and a call that rings while another takes it over (up to ${(config.storage.upstreamLeaseMs * 1.2) / 1000} s, 1.2 times storage.upstreamLeaseMs) never pops, since the stream has no replay; give the tenant its webhook secret, and the phone system the webhook URL of every instance (or of a load balancer)`,
      );
  }
}

/**
 * The relay's own connections out (outbound.ts): the proxy the environment names and the CA file
 * the config names. A malformed proxy variable or an unusable CA file is an error: the relay would
 * otherwise go around the administrator's proxy, or fail every token check at a phone system whose
 * certificate only that CA vouches for.
 */
function checkOutbound(config: RelayConfig, report: ConfigReport, env: NodeJS.ProcessEnv): void {
  let proxy: string;
  try {
    proxy = envProxyResolver(env).source;
  } catch (err) {
    proxy = 'unusable';
    report.errors.push(
      `${(err as Error).message} The relay's connections out (token checks, gateways, single sign-on) go through it: write it as http://proxy.example.com:3128 (with user:password@ before the host when the proxy asks for them), or unset it.`,
    );
  }
  const file = config.outbound.caFile;
  let trust = "Node's roots and the system store (and NODE_EXTRA_CA_CERTS)";
  if (file !== undefined) {
    try {
      const n = readCaFile(file, readCaText).length;
      trust += `, and ${file} (${n} certificate${n === 1 ? '' : 's'})`;
    } catch (err) {
      const cause = (err as Error).cause as NodeJS.ErrnoException | undefined;
      const what = cause?.code
        ? fileStartupError('outbound.caFile', file, cause).message
        : `outbound.caFile: ${(err as Error).message}`;
      report.errors.push(
        `${what} Name a PEM file (or set RELAY_CA_FILE) holding the certificate of the CA that signed the phone system's (or a TLS-inspecting proxy's) certificate, readable by the relay's user; or remove the setting.`,
      );
    }
  }
  report.summary.push(
    `outbound (token checks, gateways, single sign-on): proxy ${proxy}; trust ${trust}`,
  );
}
