import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RelayConfig } from '../config.ts';
import { printableRedisUrl } from '../startup-errors.ts';

/**
 * The one way the relay connects to Redis (events, users, and whatever else keeps state there):
 * a single server (`storage.url`), a primary found through Redis Sentinel (`storage.sentinel`), or
 * a Redis Cluster (`storage.cluster`), all through ioredis' own support. Every connection fails
 * fast while Redis is away (no offline queue: a webhook is answered 503 and retried, a readiness
 * check fails) and reconnects by itself:
 * - Sentinel: ioredis asks the sentinels for the primary at every (re)connection, checks the
 *   server's role once connected (`enableReadyCheck`: a demoted primary is left for the next
 *   answer), and listens to the sentinels' `+switch-master` (`failoverDetector`) so a promotion is
 *   followed at once, not at the next error. A READONLY answer (a primary demoted under us)
 *   reconnects too.
 * - Cluster: the nodes given are a start; slots are learnt and MOVED/ASK followed by ioredis.
 *   Multi-key commands need their keys in one slot: every key of a tenant carries the tenant as
 *   its hash tag (`<prefix>{<tenant>}:...`).
 */
export type RedisStorage = Extract<RelayConfig['storage'], { kind: 'redis' }>;

/** What the connection is for: commands, a blocking reader (XREAD BLOCK), or a subscriber. */
export interface RedisConnectionOptions {
  /** A command without an answer after this long fails (ms); none when absent. */
  commandTimeoutMs?: number;
  connectTimeoutMs: number;
  /** ioredis' maxRetriesPerRequest: 1 for commands, null for a reader or a subscriber. */
  maxRetriesPerRequest: number | null;
}

export type RedisClient = Redis | Cluster;

/** The longest pause between two reconnection attempts (to a server, to the sentinels), ms. */
export const RECONNECT_MAX_DELAY_MS = 2000;
const backoff = (n: number) => Math.min(n * 200, RECONNECT_MAX_DELAY_MS);

/** `host:port` or `[v6]:port` as ioredis' {host, port}. */
function hostAndPort(text: string): { host: string; port: number } {
  const i = text.lastIndexOf(':');
  return { host: text.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(i + 1)) };
}

/** The data nodes' user, password, database and TLS from `storage.url` (its host unused). */
function credentialsOf(url: string | undefined): Partial<RedisOptions> {
  if (!url) return {};
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return {};
  }
  const out: Partial<RedisOptions> = {};
  if (u.username) out.username = decodeURIComponent(u.username);
  if (u.password) out.password = decodeURIComponent(u.password);
  const db = Number(u.pathname.replace(/^\//, ''));
  if (u.pathname.length > 1 && Number.isInteger(db)) out.db = db;
  if (u.protocol === 'rediss:') out.tls = {};
  return out;
}

/** Builds a connection (lazy: call connect()) to the Redis `storage` describes. */
export function createRedisConnection(
  storage: RedisStorage,
  options: RedisConnectionOptions,
): RedisClient {
  const common: RedisOptions = {
    lazyConnect: true,
    maxRetriesPerRequest: options.maxRetriesPerRequest,
    enableOfflineQueue: false,
    enableReadyCheck: true,
    retryStrategy: backoff,
    connectTimeout: options.connectTimeoutMs,
    keepAlive: 10_000,
    // A primary demoted under us answers writes READONLY: reconnect (to the new one).
    reconnectOnError: (err) => /^READONLY/.test(err.message),
    ...(options.commandTimeoutMs !== undefined ? { commandTimeout: options.commandTimeoutMs } : {}),
  };
  if (storage.cluster) {
    // The nodes' connections are the cluster's: lazy, with their own queue (ioredis'
    // ConnectionPool), which `lazyConnect` or `enableOfflineQueue` here would undo (every command
    // to a node not yet connected failing). Failing fast is the cluster's own option.
    const {
      lazyConnect: _lazy,
      enableOfflineQueue: _queue,
      retryStrategy: _retry,
      ...node
    } = common;
    const clusterOptions: ClusterOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      // Its ready check (CLUSTER INFO) goes through the cluster before it is ready, which no
      // offline queue refuses: the slots it has just read from the nodes are the check.
      enableReadyCheck: false,
      maxRedirections: 16,
      clusterRetryStrategy: backoff,
      redisOptions: { ...node, ...credentialsOf(storage.url) },
    };
    return new Cluster(storage.cluster.nodes.map(hostAndPort), clusterOptions);
  }
  if (storage.sentinel)
    return new Redis({
      ...common,
      ...credentialsOf(storage.url),
      sentinels: storage.sentinel.nodes.map(hostAndPort),
      name: storage.sentinel.name,
      role: 'master',
      ...(storage.sentinel.password ? { sentinelPassword: storage.sentinel.password } : {}),
      sentinelRetryStrategy: backoff,
      failoverDetector: true,
    });
  return new Redis(storage.url!, common);
}

/** Where the storage is, fit to print (no password): for logs, errors and --check-config. */
export function describeRedisStorage(storage: RedisStorage): string {
  if (storage.cluster) return `the Redis Cluster at ${storage.cluster.nodes.join(', ')}`;
  if (storage.sentinel)
    return `the Redis primary "${storage.sentinel.name}" of the sentinels ${storage.sentinel.nodes.join(', ')}`;
  return `Redis at ${printableRedisUrl(storage.url!)}`;
}

/** Every password the storage settings hold (for the log scrubber). */
export function redisSecrets(storage: RedisStorage): string[] {
  const out: string[] = [];
  const password = credentialsOf(storage.url).password;
  if (password) out.push(password);
  if (storage.sentinel?.password) out.push(storage.sentinel.password);
  return out;
}

/**
 * connect(), bounded: a Sentinel connection whose sentinels are unreachable or do not know the
 * name retries for ever (as it must once running), so a start gives up after `ms` with the last
 * error the connection reported.
 */
export async function connectWithin(client: RedisClient, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no Redis connection within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
