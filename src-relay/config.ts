import { readFileSync } from 'node:fs';
import type { LogLevel } from '../src-main/core/log.ts';
import { TENANT_PATTERN } from '../src-main/core/relay-client/protocol.ts';
import type { RetentionOptions } from './store/types.ts';
import { DEFAULT_RETENTION } from './store/types.ts';

/** One tenant the relay serves: where its service lives and the webhook secrets it signs with. */
export interface TenantConfig {
  /** The tenant's service base URL; client tokens are validated against it. */
  baseUrl: string;
  /** Webhook secrets accepted now (several during a rotation). Remove a secret to retire it. */
  secrets: string[];
}

export type StorageConfig =
  { kind: 'memory'; snapshotFile?: string } | { kind: 'redis'; url: string; keyPrefix?: string };

export interface ClientOptions {
  /** Heartbeat interval the relay advertises to clients (ms). */
  heartbeatMs: number;
  /** A client that sends nothing for this long is closed with 4000 (ms). */
  idleTimeoutMs: number;
  /** A session is closed with 4002 (reconnect with a fresh token) after this long (ms). */
  authMaxAgeMs: number;
  /** A client whose unsent data exceeds this is closed with 4008 and resumes from its cursor. */
  maxBufferedBytes: number;
  /** Events read from storage per page when a client resumes. */
  replayBatch: number;
  /** A hello must arrive within this long after the upgrade (ms). */
  helloTimeoutMs: number;
}

export interface RelayConfig {
  host: string;
  port: number;
  tls?: { certFile: string; keyFile: string };
  maxBodyBytes: number;
  tenants: Record<string, TenantConfig>;
  storage: StorageConfig;
  retention: RetentionOptions;
  clients: ClientOptions;
  auth: { positiveTtlMs: number; negativeTtlMs: number; timeoutMs: number; maxInFlight: number };
  logLevel: LogLevel;
  /** How long a graceful shutdown waits for in-flight webhooks (ms). */
  shutdownGraceMs: number;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export const DEFAULT_CLIENT_OPTIONS: ClientOptions = {
  heartbeatMs: 25_000,
  idleTimeoutMs: 60_000,
  authMaxAgeMs: 60 * 60_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  replayBatch: 500,
  helloTimeoutMs: 10_000,
};

export function defaultConfig(): RelayConfig {
  return {
    host: '127.0.0.1',
    port: 8787,
    maxBodyBytes: 64 * 1024,
    tenants: {},
    storage: { kind: 'memory' },
    retention: { ...DEFAULT_RETENTION },
    clients: { ...DEFAULT_CLIENT_OPTIONS },
    auth: { positiveTtlMs: 5 * 60_000, negativeTtlMs: 10_000, timeoutMs: 5_000, maxInFlight: 100 },
    logLevel: 'info',
    shutdownGraceMs: 10_000,
  };
}

/**
 * The config file (JSON, optional) merged over the defaults, then environment overrides:
 * RELAY_HOST, RELAY_PORT, RELAY_TLS_CERT + RELAY_TLS_KEY, RELAY_MAX_BODY_BYTES, RELAY_LOG_LEVEL,
 * RELAY_STORAGE (memory|redis), RELAY_REDIS_URL (implies redis), RELAY_REDIS_PREFIX,
 * RELAY_SNAPSHOT_FILE, and per tenant RELAY_TENANT_<NAME>_SECRETS (comma-separated) and
 * RELAY_TENANT_<NAME>_BASE_URL (NAME upper-cased, `-` and `.` as `_`). Secrets belong in the
 * environment or a file readable by the relay only; the relay never logs them.
 */
export function loadConfig(path: string | undefined, env: NodeJS.ProcessEnv): RelayConfig {
  const config = defaultConfig();
  if (path) {
    const file = JSON.parse(readFileSync(path, 'utf8')) as Partial<RelayConfig>;
    Object.assign(config, {
      ...file,
      retention: { ...config.retention, ...file.retention },
      clients: { ...config.clients, ...file.clients },
      auth: { ...config.auth, ...file.auth },
    });
  }
  if (env.RELAY_HOST) config.host = env.RELAY_HOST;
  if (env.RELAY_PORT) config.port = intFrom(env.RELAY_PORT, 'RELAY_PORT');
  if (env.RELAY_MAX_BODY_BYTES)
    config.maxBodyBytes = intFrom(env.RELAY_MAX_BODY_BYTES, 'RELAY_MAX_BODY_BYTES');
  if (env.RELAY_LOG_LEVEL) config.logLevel = env.RELAY_LOG_LEVEL as LogLevel;
  if (env.RELAY_TLS_CERT || env.RELAY_TLS_KEY)
    config.tls = { certFile: env.RELAY_TLS_CERT ?? '', keyFile: env.RELAY_TLS_KEY ?? '' };
  if (env.RELAY_STORAGE === 'memory') config.storage = { kind: 'memory' };
  if (env.RELAY_REDIS_URL || env.RELAY_STORAGE === 'redis') {
    const prev = config.storage.kind === 'redis' ? config.storage : undefined;
    config.storage = {
      kind: 'redis',
      url: env.RELAY_REDIS_URL ?? prev?.url ?? 'redis://127.0.0.1:6379',
      keyPrefix: env.RELAY_REDIS_PREFIX ?? prev?.keyPrefix,
    };
  }
  if (env.RELAY_SNAPSHOT_FILE && config.storage.kind === 'memory')
    config.storage.snapshotFile = env.RELAY_SNAPSHOT_FILE;
  for (const [name, value] of Object.entries(env)) {
    const m = /^RELAY_TENANT_([A-Z0-9_]+)_(SECRETS|BASE_URL)$/.exec(name);
    if (!m || value === undefined) continue;
    const envName = m[1]!;
    const tenant =
      Object.keys(config.tenants).find((t) => t.toUpperCase().replace(/[-.]/g, '_') === envName) ??
      envName.toLowerCase();
    const t = (config.tenants[tenant] ??= { baseUrl: '', secrets: [] });
    if (m[2] === 'SECRETS')
      t.secrets = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else t.baseUrl = value;
  }
  validateConfig(config);
  return config;
}

export function validateConfig(config: RelayConfig): void {
  const problems: string[] = [];
  if (Object.keys(config.tenants).length === 0) problems.push('no tenants configured');
  for (const [tenant, t] of Object.entries(config.tenants)) {
    if (!TENANT_PATTERN.test(tenant)) problems.push(`tenant name "${tenant}" is not allowed`);
    if (!Array.isArray(t.secrets) || t.secrets.length === 0)
      problems.push(`tenant ${tenant}: no webhook secrets`);
    try {
      const u = new URL(t.baseUrl);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
    } catch {
      problems.push(`tenant ${tenant}: baseUrl is not an http(s) URL`);
    }
  }
  if (config.retention.dedupeTtlMs < 25 * 3600_000)
    problems.push('retention.dedupeTtlMs must be at least 25 hours (the service retries for 24)');
  if (config.tls && (!config.tls.certFile || !config.tls.keyFile))
    problems.push('tls needs both certFile and keyFile');
  if (!(config.maxBodyBytes > 0)) problems.push('maxBodyBytes must be positive');
  const storage = config.storage as { kind?: unknown; url?: unknown };
  if (storage.kind !== 'memory' && storage.kind !== 'redis')
    problems.push('storage.kind must be "memory" or "redis"');
  if (storage.kind === 'redis' && (typeof storage.url !== 'string' || storage.url === ''))
    problems.push('storage.url (redis://...) is required for the redis backend');
  if (!LOG_LEVELS.includes(config.logLevel))
    problems.push(`logLevel must be one of ${LOG_LEVELS.join(', ')}`);
  if (problems.length) throw new Error('relay config: ' + problems.join('; '));
}

function intFrom(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}
