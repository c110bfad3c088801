import { Redis } from 'ioredis';
import type { Clock, TimerHandle } from '../../src-main/core/clock.ts';
import type { Logger } from '../../src-main/core/log.ts';
import { compareCursors } from '../../src-main/core/relay-client/protocol.ts';
import type {
  AppendResult,
  EventStore,
  NewEvent,
  ReadResult,
  RetentionOptions,
  StoredEvent,
} from './types.ts';
import { DEFAULT_RETENTION } from './types.ts';

/**
 * Redis Streams backend, for several relay instances behind a load balancer.
 *
 * Layout (the `{tenant}` hash tag keeps a tenant's keys in one cluster slot):
 * - `<prefix>{<tenant>}:events`  stream; fields id (event_id), ev (code), to, at (arrival ms), body
 * - `<prefix>{<tenant>}:seen:<event_id>`  dedupe marker, SET NX PX <dedupeTtl>
 * The marker and the XADD happen in one Lua script, so a webhook is either stored and marked or
 * neither: a retry after a failure is never mistaken for a duplicate. Every instance runs one
 * XREAD BLOCK loop over all configured tenants' streams, so an event accepted by any instance
 * reaches clients connected to any other. Retention: XADD MAXLEN ~ maxEvents, plus XTRIM MINID ~
 * (now - maxAge) every minute.
 */
const APPEND_SCRIPT = `
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  local id = redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'ev', ARGV[4], 'to', ARGV[5], 'at', ARGV[6], 'body', ARGV[7])
  if type(id) == 'table' and id.err then
    redis.call('DEL', KEYS[1])
    return id
  end
  return id
end
return false
`;

export interface RedisStoreOptions {
  url: string;
  /** Tenants whose streams this instance follows (the configured ones). */
  tenants: readonly string[];
  clock: Clock;
  logger: Logger;
  keyPrefix?: string;
  retention?: Partial<RetentionOptions>;
  /** How long one XREAD blocks before looping (ms); bounds shutdown time. */
  blockMs?: number;
}

type AppendCommand = (
  seenKey: string,
  streamKey: string,
  ...args: string[]
) => Promise<string | null>;

export class RedisStore implements EventStore {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  private readonly reader: Redis;
  private readonly prefix: string;
  private readonly tenants: readonly string[];
  private readonly retention: RetentionOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly blockMs: number;
  private readonly listeners = new Set<(e: StoredEvent) => void>();
  private readonly lastIds = new Map<string, string>();
  private closed = false;
  private loop: Promise<void> | undefined;
  private trimTimer: TimerHandle | undefined;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.keyPrefix ?? 'relay:';
    this.tenants = options.tenants;
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    this.clock = options.clock;
    this.logger = options.logger;
    this.blockMs = options.blockMs ?? 2000;
    // Commands fail fast while Redis is down (the webhook answers 503 and the service retries)
    // instead of queueing without bound.
    const common = {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: (n: number) => Math.min(n * 200, 2000),
    };
    this.redis = new Redis(options.url, common);
    this.reader = new Redis(options.url, { ...common, maxRetriesPerRequest: null });
    this.redis.defineCommand('relayAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
    for (const c of [this.redis, this.reader])
      c.on('error', (err: Error) => this.logger.warn('redis error', { err: err.message }));
  }

  /** Connects, learns each tenant's current end of stream, starts following. */
  async open(): Promise<void> {
    await Promise.all([this.redis.connect(), this.reader.connect()]);
    for (const tenant of this.tenants) this.lastIds.set(tenant, await this.latest(tenant));
    this.loop = this.follow();
    this.scheduleTrim();
  }

  streamKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:events`;
  }

  private seenKey(tenant: string, eventId: string): string {
    return `${this.prefix}{${tenant}}:seen:${eventId}`;
  }

  async append(e: NewEvent): Promise<AppendResult> {
    const append = (this.redis as unknown as { relayAppend: AppendCommand }).relayAppend.bind(
      this.redis,
    );
    const id = await append(
      this.seenKey(e.tenant, e.eventId),
      this.streamKey(e.tenant),
      String(this.retention.dedupeTtlMs),
      String(this.retention.maxEvents),
      e.eventId,
      String(e.event),
      e.to ?? '',
      String(e.receivedAt),
      e.body,
    );
    return id ? { status: 'stored', cursor: id } : { status: 'duplicate' };
  }

  async readAfter(tenant: string, cursor: string, limit: number): Promise<ReadResult> {
    const key = this.streamKey(tenant);
    const entries = (await this.redis.xrange(key, `(${cursor}`, '+', 'COUNT', limit)) as [
      string,
      string[],
    ][];
    const events = entries.map(([id, fields]) => toEvent(tenant, id, fields));
    // Trimming does not record what it removed, so the gap test is conservative: the stream has
    // lost entries (entries-added > length) and the client's cursor is older than the first kept.
    let gap: ReadResult['gap'] = null;
    const info = await this.streamInfo(key);
    if (info && info.first && info.added > info.length && compareCursors(cursor, info.first) < 0)
      gap = { oldest: info.first };
    return { events, gap };
  }

  async latest(tenant: string): Promise<string> {
    const last = (await this.redis.xrevrange(this.streamKey(tenant), '+', '-', 'COUNT', 1)) as [
      string,
      string[],
    ][];
    return last[0]?.[0] ?? '0-0'; // an empty stream: everything from the beginning is new
  }

  subscribe(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clock.clearTimeout(this.trimTimer);
    this.reader.disconnect();
    await this.loop?.catch(() => {});
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async streamInfo(
    key: string,
  ): Promise<{ length: number; added: number; first: string | null } | null> {
    try {
      const raw = (await this.redis.call('XINFO', 'STREAM', key)) as unknown[];
      const get = (name: string) => raw[raw.indexOf(name) + 1];
      const first = get('first-entry') as [string, string[]] | null;
      return {
        length: Number(get('length')),
        added: Number(get('entries-added')),
        first: first ? first[0] : null,
      };
    } catch {
      return null; // no such stream yet
    }
  }

  private async follow(): Promise<void> {
    const keys = this.tenants.map((t) => this.streamKey(t));
    while (!this.closed) {
      try {
        const ids = this.tenants.map((t) => this.lastIds.get(t) ?? '0-0');
        const reply = (await this.reader.xread(
          'COUNT',
          1000,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          ...keys,
          ...ids,
        )) as [string, [string, string[]][]][] | null;
        if (!reply) continue;
        for (const [key, entries] of reply) {
          const tenant = this.tenants[keys.indexOf(key)]!;
          for (const [id, fields] of entries) {
            this.lastIds.set(tenant, id);
            const event = toEvent(tenant, id, fields);
            for (const l of this.listeners) l(event);
          }
        }
      } catch (err) {
        if (this.closed) return;
        this.logger.warn('redis follow failed; retrying', { err: (err as Error).message });
        await new Promise<void>((r) => this.clock.setTimeout(r, 500));
      }
    }
  }

  private scheduleTrim(): void {
    this.trimTimer = this.clock.setTimeout(() => {
      const minId = `${Math.max(0, this.clock.now() - this.retention.maxAgeMs)}-0`;
      Promise.all(this.tenants.map((t) => this.redis.xtrim(this.streamKey(t), 'MINID', '~', minId)))
        .catch((err: Error) => this.logger.warn('redis trim failed', { err: err.message }))
        .finally(() => {
          if (!this.closed) this.scheduleTrim();
        });
    }, 60_000);
  }
}

function toEvent(tenant: string, cursor: string, fields: string[]): StoredEvent {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  return {
    tenant,
    cursor,
    eventId: f.id ?? '',
    event: Number(f.ev),
    to: f.to ? f.to : null,
    receivedAt: Number(f.at),
    body: f.body ?? '',
  };
}
