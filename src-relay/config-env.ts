/**
 * The relay's configuration as it starts: the config file (JSON, optional) and the environment's
 * overrides over the defaults, checked by the schema (config.ts).
 */
import { readFileSync } from 'node:fs';
import { parseJson } from '../src-shared/files/json-text.ts';
import { fileStartupError } from './startup-errors.ts';
import { parseConfig, type RelayConfig } from './config.ts';

/**
 * The config file (JSON, optional) merged over the defaults, then environment overrides:
 * RELAY_HOST, RELAY_PORT, RELAY_TLS_CERT + RELAY_TLS_KEY, RELAY_MAX_BODY_BYTES, RELAY_LOG_LEVEL,
 * RELAY_TRUST_PROXY (true|false), RELAY_STORAGE (memory|redis), RELAY_REDIS_URL (implies redis),
 * RELAY_REDIS_PREFIX, RELAY_REDIS_SENTINELS + RELAY_REDIS_SENTINEL_NAME (+ RELAY_REDIS_SENTINEL_PASSWORD),
 * RELAY_REDIS_CLUSTER_NODES, RELAY_REDIS_MIN_REPLICAS, RELAY_SNAPSHOT_FILE, RELAY_USERS_FILE, RELAY_CODE_KEY_FILE, RELAY_CA_FILE, and per tenant RELAY_TENANT_<NAME>_SECRETS
 * (comma-separated), RELAY_TENANT_<NAME>_BASE_URL and RELAY_TENANT_<NAME>_PHONE_SYSTEM (NAME
 * upper-cased, `-` and `.` as `_`).
 * Secrets belong in the environment or a file readable by the relay only; the relay never logs
 * them, and a file that is not JSON is reported by position only (never quoted).
 */
export function loadConfig(path: string | undefined, env: NodeJS.ProcessEnv): RelayConfig {
  let raw: Record<string, unknown> = {};
  if (path) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw fileStartupError('relay config', path, err);
    }
    const parsed = parseJson(text);
    if (!parsed.ok) throw new Error(`relay config: ${path} is not valid JSON${parsed.where}`);
    if (!parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value))
      throw new Error(`relay config: ${path} must hold a JSON object`);
    raw = parsed.value as Record<string, unknown>;
  }
  const obj = (key: string): Record<string, unknown> => {
    const v = raw[key];
    return v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as object) } : {};
  };
  if (env.RELAY_HOST) raw.host = env.RELAY_HOST;
  if (env.RELAY_PORT) raw.port = intFrom(env.RELAY_PORT, 'RELAY_PORT');
  if (env.RELAY_MAX_BODY_BYTES)
    raw.maxBodyBytes = intFrom(env.RELAY_MAX_BODY_BYTES, 'RELAY_MAX_BODY_BYTES');
  if (env.RELAY_LOG_LEVEL) raw.logLevel = env.RELAY_LOG_LEVEL;
  if (env.RELAY_TRUST_PROXY) raw.trustProxy = env.RELAY_TRUST_PROXY === 'true';
  if (env.RELAY_TLS_CERT || env.RELAY_TLS_KEY)
    raw.tls = { certFile: env.RELAY_TLS_CERT ?? '', keyFile: env.RELAY_TLS_KEY ?? '' };
  if (env.RELAY_STORAGE === 'memory') raw.storage = { kind: 'memory' };
  const redisTopology = redisTopologyFromEnv(env);
  if (env.RELAY_REDIS_URL || env.RELAY_STORAGE === 'redis' || redisTopology) {
    const prev = obj('storage');
    const wasRedis = prev.kind === 'redis';
    const topology = { ...(wasRedis ? prev : {}), ...redisTopology };
    raw.storage = {
      ...topology,
      kind: 'redis',
      url:
        env.RELAY_REDIS_URL ??
        (wasRedis ? prev.url : undefined) ??
        (topology.sentinel || topology.cluster ? undefined : 'redis://127.0.0.1:6379'),
      ...(env.RELAY_REDIS_PREFIX !== undefined ? { keyPrefix: env.RELAY_REDIS_PREFIX } : {}),
    };
  }
  if (env.RELAY_USERS_FILE) raw.users = { ...obj('users'), file: env.RELAY_USERS_FILE };
  if (env.RELAY_CODE_KEY_FILE)
    raw.users = { ...obj('users'), codeKeyFile: env.RELAY_CODE_KEY_FILE };
  if (env.RELAY_CA_FILE) raw.outbound = { ...obj('outbound'), caFile: env.RELAY_CA_FILE };
  if (env.RELAY_SNAPSHOT_FILE) {
    const storage = obj('storage');
    if (storage.kind === undefined || storage.kind === 'memory')
      raw.storage = { ...storage, kind: 'memory', snapshotFile: env.RELAY_SNAPSHOT_FILE };
  }
  const tenants = obj('tenants');
  for (const [name, value] of Object.entries(env)) {
    const m = /^RELAY_TENANT_([A-Z0-9_]+)_(SECRETS|BASE_URL|PHONE_SYSTEM)$/.exec(name);
    if (!m || value === undefined) continue;
    const envName = m[1]!;
    const tenant =
      Object.keys(tenants).find((t) => t.toUpperCase().replace(/[-.]/g, '_') === envName) ??
      envName.toLowerCase();
    const t = { baseUrl: '', secrets: [] as string[], ...(tenants[tenant] as object | undefined) };
    if (m[2] === 'SECRETS')
      t.secrets = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (m[2] === 'PHONE_SYSTEM') Object.assign(t, { phoneSystem: value.trim() });
    else t.baseUrl = value;
    tenants[tenant] = t;
  }
  raw.tenants = tenants;
  return parseConfig(raw);
}

/**
 * Redis Sentinel / Cluster from the environment (each implies the redis backend):
 * RELAY_REDIS_SENTINELS ("host:port,host:port") with RELAY_REDIS_SENTINEL_NAME (and
 * RELAY_REDIS_SENTINEL_PASSWORD), RELAY_REDIS_CLUSTER_NODES ("host:port,..."),
 * RELAY_REDIS_MIN_REPLICAS.
 */
function redisTopologyFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> | null {
  const list = (text: string) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const out: Record<string, unknown> = {};
  if (env.RELAY_REDIS_SENTINELS || env.RELAY_REDIS_SENTINEL_NAME)
    out.sentinel = {
      name: env.RELAY_REDIS_SENTINEL_NAME ?? '',
      nodes: list(env.RELAY_REDIS_SENTINELS ?? ''),
      ...(env.RELAY_REDIS_SENTINEL_PASSWORD ? { password: env.RELAY_REDIS_SENTINEL_PASSWORD } : {}),
    };
  if (env.RELAY_REDIS_CLUSTER_NODES) out.cluster = { nodes: list(env.RELAY_REDIS_CLUSTER_NODES) };
  if (env.RELAY_REDIS_MIN_REPLICAS)
    out.minReplicas = intFrom(env.RELAY_REDIS_MIN_REPLICAS, 'RELAY_REDIS_MIN_REPLICAS');
  return Object.keys(out).length > 0 ? out : null;
}

function intFrom(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}
