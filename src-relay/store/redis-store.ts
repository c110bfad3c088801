import type { Cluster, Redis } from 'ioredis';
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import { RedisCallMemory, type SharedCallMemory } from './call-memory-redis.ts';
import { SampledLog } from '../log-sampler.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { compareCursors } from '../../src-shared/relay/relay-protocol.ts';
import { redisStartupError } from '../startup-errors.ts';
import type {
  AppendResult,
  EventStore,
  NewEvent,
  ReadResult,
  RetentionOptions,
  StoredEvent,
} from './types.ts';
import type { StorageHealth } from './types.ts';
import { DEFAULT_RETENTION, FencedError, waitFor } from './types.ts';
import type { LeaseBackend } from '../gateway/lease.ts';
import type { TermTokenBackend } from '../gateway/term-tokens.ts';
import {
  connectWithin,
  createRedisConnection,
  describeRedisStorage,
  type RedisClient,
  type RedisStorage,
} from './redis-connection.ts';
import { SentinelQuorum } from './sentinel-quorum.ts';
import { Emitter } from '../../src-shared/kit/emitter.ts';

/**
 * Redis Streams backend, for several relay instances behind a load balancer.
 *
 * Layout (the `{tenant}` hash tag keeps a tenant's keys in one cluster slot):
 * - `<prefix>{<tenant>}:events`  stream; fields id (event_id), ev (code), to, at (arrival ms), body
 * - `<prefix>{<tenant>}:seen:<event_id>`  dedupe marker, SET NX PX <dedupeTtl>
 * The marker and the XADD happen in one Lua script, so a webhook is either stored and marked or
 * neither: a retry after a failure is never mistaken for a duplicate. (With minReplicas, a
 * retry after a failed WAIT is a duplicate, answered only once WAIT succeeds: see append.) Every instance runs one
 * XREAD BLOCK loop over all configured tenants' streams (in a Redis Cluster, one per tenant: a
 * command's keys must share a slot), so an event accepted by any instance reaches clients
 * connected to any other. Retention: XADD MAXLEN ~ maxEvents, plus XTRIM MINID ~ (now - maxAge)
 * every minute.
 *
 * Failover (Sentinel): a write the old primary acknowledged but had not yet sent to a replica is
 * gone from the promoted one. With `minReplicas` (Redis WAIT) a webhook is answered 200 only
 * once that many replicas have its event, so nothing acknowledged is lost; a webhook whose WAIT
 * fails is answered 503 and retried by the service (its marker may have been replicated with the
 * event, and the retry is then a duplicate, which is right). What is lost in that window is only
 * an event desktops may already have been handed live (the follower reads the primary before the
 * replicas confirm): the retry stores it again under a new, later id, and desktops drop it by its
 * event_id (their dedupe). New ids on the promoted primary are later than any the old one gave as
 * long as the two hosts' clocks agree within the failover time (XADD * ids start at the host's
 * time in ms).
 */
const APPEND_SCRIPT = `
if ARGV[8] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return false
end
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

/**
 * A delivery's events (a Yeastar report can carry several: a caller who hangs up dismisses every
 * member that was ringing), stored by one script: one round trip, one fsync, and one hand-over to
 * every follower, instead of one of each per event. KEYS: the stream, the tenant's upstream lease,
 * then each event's marker. ARGV: 1-2 and 3 as the append's 1-2 and 8, 4 a lease holder's token
 * ('' for a webhook: then the lease is not read), then five per event (id, ev, to, at, body). A
 * holder's events are refused ('FENCED', nothing stored) unless the lease still holds its token,
 * as FENCED_APPEND_SCRIPT refuses one. Each event as APPEND_SCRIPT does it, in order; an id or
 * false (a duplicate) each. An XADD that fails
 * ends the script as the serial appends did: the events before it are stored, its marker is
 * removed, nothing after it is tried (the webhook is answered 503 and retried: the stored ones are
 * then duplicates, the rest come after them).
 */
const APPEND_ALL_SCRIPT = `
if ARGV[4] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[4] then
  return redis.error_reply('FENCED the upstream lease is not held with this token')
end
local out = {}
for i = 3, #KEYS do
  local a = 4 + (i - 3) * 5
  if ARGV[3] == '1' and redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    out[i - 2] = false
  elseif redis.call('SET', KEYS[i], '1', 'NX', 'PX', ARGV[1]) then
    local id = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[a + 1], 'ev', ARGV[a + 2], 'to', ARGV[a + 3], 'at', ARGV[a + 4], 'body', ARGV[a + 5])
    if type(id) == 'table' and id.err then
      redis.call('DEL', KEYS[i])
      return id
    end
    out[i - 2] = id
  else
    out[i - 2] = false
  end
end
return out
`;

/**
 * The append of a lease holder's event (gateway/lease.ts): the same, only while KEYS[3], the
 * tenant's upstream lease, still holds the holder's token ARGV[9] (after the append's eight). The check is where the effect
 * lands, in the same script, so a holder paused past its lease (SIGSTOP, a long GC, a partition)
 * cannot store anything once another instance took the lease, or once it lapsed. 'FENCED' when
 * refused.
 */
const FENCED_APPEND_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[9] then
  return redis.error_reply('FENCED the upstream lease is not held with this token')
end
${APPEND_SCRIPT}`;

/**
 * A tenant's upstream lease: taken when nobody holds it (SET NX PX), the value naming the holder
 * and a fencing number from the tenant's counter (INCR: every term a new, larger number).
 */
const LEASE_ACQUIRE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local n = redis.call('INCR', KEYS[2])
local token = ARGV[1] .. '#' .. n
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return token
`;
/** Compare-and-extend: the lease's time is renewed only by its holder. */
const LEASE_EXTEND_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;
/** Compare-and-delete: a holder that stops gives its lease back (and no one else's). */
const LEASE_RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
/**
 * The access tokens the lease's terms were given (gateway/term-tokens.ts: sealed, named by an
 * HMAC), a hash beside the lease: one entry set, entries past their time (the number each value
 * starts with, ARGV[4] now) dropped, and the hash kept until its last token expires (ARGV[3]).
 */
const TERM_TOKEN_RECORD_SCRIPT = `
local now = tonumber(ARGV[4])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], '^(%d+)'))
  if at == nil or at <= now then redis.call('HDEL', KEYS[1], all[i]) end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = tonumber(ARGV[3]) - now
if ttl > redis.call('PTTL', KEYS[1]) then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`;

/** A call's log claimed (organisation mode): the first SET NX wins, anyone else reads the holder. */
const CLAIM_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return redis.call('GET', KEYS[1])
`;

export interface RedisStoreOptions {
  /** A single Redis (tests); or `storage`, the config's settings (Sentinel, Cluster). */
  url?: string;
  storage?: RedisStorage;
  /** Tenants whose streams this instance follows (the configured ones). */
  tenants: readonly string[];
  clock: Clock;
  logger: Logger;
  keyPrefix?: string;
  retention?: Partial<RetentionOptions>;
  /** How long one XREAD blocks before looping (ms); bounds shutdown time. */
  blockMs?: number;
  /**
   * A command without an answer after this long fails (ms): a hung Redis (paused, swapping, a
   * network that drops packets) gives a 503 the service retries and a failing readiness, instead of
   * webhooks that hang for tens of seconds and a /readyz that never answers.
   */
  commandTimeoutMs?: number;
}

type LeaseCommand = (key: string, ...args: string[]) => Promise<string | number | null>;

/**
 * A connection that waits for the tenants' call requests and answers (watchCallRequests,
 * watchCallAnswers): XREAD BLOCK on their bell streams (`keys`, the watched ones), each from the
 * last entry it saw (so nothing rung between two reads is missed), connected and started at the
 * first watch.
 */
interface CallBell {
  client: RedisClient;
  tenants: readonly string[];
  keys: string[];
  lastIds: Map<string, string>;
  loop?: Promise<void>;
}

export class RedisStore implements EventStore, LeaseBackend, TermTokenBackend {
  readonly kind = 'redis' as const;
  /** The Yeastar call memory every instance shares (call-memory-redis.ts). */
  readonly callMemory: SharedCallMemory;
  private readonly redis: RedisClient;
  /**
   * The connection of the upstream lease (acquire, extend, release), its terms' tokens and the
   * Yeastar call memory. With minReplicas its own: an append's WAIT blocks its connection until
   * the replicas answer or replicaTimeoutMs, and Redis serves none of that connection's later
   * commands meanwhile, so webhooks waiting for a replica (none left after a Cluster failover
   * until the killed node is back) would hold the holder's renewals past its term, and every
   * report's call memory, behind them. Nothing is lost by the split: WAIT waits for the primary's
   * replication offset at the append, which covers a call memory written before it on any
   * connection. Without minReplicas nothing blocks: the command connection.
   */
  private readonly leases: RedisClient;
  /** The followers' connections: one for every tenant, or one per tenant in a Cluster. */
  private readonly readers: { client: RedisClient; tenants: readonly string[] }[];
  /**
   * The call requests' waits (gateway/call-handoff.ts): a blocking read holds its connection, so
   * neither the commands' one nor the followers'; one for every tenant, or one per tenant in a
   * Cluster (the tenant's slot), following failovers as the others do.
   */
  private readonly bells: CallBell[];
  private readonly bellListeners = new Map<string, Emitter<[]>>();
  private readonly storage: RedisStorage;
  private readonly prefix: string;
  private readonly tenants: readonly string[];
  private readonly retention: RetentionOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly blockMs: number;
  private readonly commandTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly health = {
    connected: false,
    reconnects: 0,
    primaryChanges: 0,
    primary: null as string | null,
    waitFailures: 0,
    unconfirmedPrimaries: 0,
    unvouchedWrites: 0,
  } as StorageHealth;
  /** Sentinel: asks every sentinel which server is the primary (see SentinelQuorum). */
  private readonly quorum: SentinelQuorum | undefined;
  /** Sentinel: each connection's server once a majority of the sentinels named it the primary. */
  private readonly confirmed = new Map<RedisClient, string>();
  /** The last error a connection reported: the cause behind connect()'s "Connection is closed." */
  private lastError: Error | undefined;
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();
  private readonly lastIds = new Map<string, string>();
  /** The newest id this instance appended, per tenant (for published()). */
  private readonly lastAppended = new Map<string, string>();
  private readonly publishWaiters: (() => void)[] = [];
  private closed = false;
  private loops: Promise<void>[] = [];
  private trimTimer: TimerHandle | undefined;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.keyPrefix ?? 'relay:';
    this.tenants = options.tenants;
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    this.clock = options.clock;
    this.logger = options.logger;
    this.blockMs = options.blockMs ?? 2000;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 2000;
    this.storage = options.storage ?? {
      kind: 'redis',
      url: options.url,
      commandTimeoutMs: this.commandTimeoutMs,
      minReplicas: 0,
      replicaTimeoutMs: 1_000,
      upstreamLeaseMs: 10_000,
    };
    this.connectTimeoutMs = Math.max(this.commandTimeoutMs, 1000);
    // Commands fail fast while Redis is down (the webhook answers 503 and the service retries)
    // instead of queueing without bound, and fail after commandTimeoutMs while it does not answer.
    this.redis = createRedisConnection(this.storage, {
      connectTimeoutMs: this.connectTimeoutMs,
      maxRetriesPerRequest: 1,
      commandTimeoutMs: this.commandTimeoutMs,
    });
    this.leases =
      this.storage.minReplicas > 0
        ? createRedisConnection(this.storage, {
            connectTimeoutMs: this.connectTimeoutMs,
            maxRetriesPerRequest: 1,
            commandTimeoutMs: this.commandTimeoutMs,
          })
        : this.redis;
    // The follower's XREAD blocks for blockMs by design: its time-out is on top of that.
    const reader = () =>
      createRedisConnection(this.storage, {
        connectTimeoutMs: this.connectTimeoutMs,
        maxRetriesPerRequest: null,
        commandTimeoutMs: this.blockMs + this.commandTimeoutMs,
      });
    this.readers = this.storage.cluster
      ? this.tenants.map((t) => ({ client: reader(), tenants: [t] }))
      : [{ client: reader(), tenants: this.tenants }];
    const bell = (tenants: readonly string[]): CallBell => ({
      client: reader(),
      tenants,
      keys: [],
      lastIds: new Map(),
    });
    this.bells = this.storage.cluster ? this.tenants.map((t) => bell([t])) : [bell(this.tenants)];
    // Reconnected (a failover, a restart): each watched tenant's newest bell rings once more, so a
    // bell whose id the server now gives lower than the last one seen is not missed.
    for (const b of this.bells) b.client.on('ready', () => b.lastIds.clear());
    this.callMemory = new RedisCallMemory(this.leases, this.prefix, {
      leaseKey: (tenant) => this.leaseKey(tenant),
      usable: () => this.isConfirmed(this.leases),
    });
    this.redis.defineCommand('relayAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
    // numberOfKeys left out: the caller passes it (one marker per event of the delivery).
    this.redis.defineCommand('relayAppendAll', { lua: APPEND_ALL_SCRIPT });
    this.redis.defineCommand('relayFencedAppend', { numberOfKeys: 3, lua: FENCED_APPEND_SCRIPT });
    this.leases.defineCommand('relayLeaseAcquire', { numberOfKeys: 2, lua: LEASE_ACQUIRE_SCRIPT });
    this.leases.defineCommand('relayLeaseExtend', { numberOfKeys: 1, lua: LEASE_EXTEND_SCRIPT });
    this.leases.defineCommand('relayLeaseRelease', { numberOfKeys: 1, lua: LEASE_RELEASE_SCRIPT });
    this.leases.defineCommand('relayTermToken', { numberOfKeys: 1, lua: TERM_TOKEN_RECORD_SCRIPT });
    this.redis.defineCommand('relayClaimCall', { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    // While Redis is down, ioredis reports an error at every reconnect attempt of both
    // connections (about twice a second): the first ones are logged, then one line a minute that
    // counts the rest. /readyz and the webhooks' 503 say it all the time.
    const errors = new SampledLog(this.logger, 'warn', 'redis error', this.clock, {
      perWindow: 2,
      windowMs: 60_000,
    });
    const failing = new Set<RedisClient>();
    for (const c of this.connections()) {
      c.on('error', (err: Error) => {
        this.lastError = err;
        failing.add(c);
        errors.write({ error: err });
      });
      // ioredis gives up on a connection for good ("end") when the sentinels' +switch-master
      // arrives while it is connecting (its FailoverDetector disconnects the connector mid-connect:
      // seen under load, both instances' command connections ended, no webhook acknowledged
      // again). Nothing but close() may end a connection of the store: connect it again.
      c.on('end', () => {
        if (this.closed) return;
        this.logger.warn('redis connection ended; connecting again');
        this.clock.setTimeout(() => {
          if (!this.closed && c.status === 'end') c.connect().catch(() => {});
        }, 200);
      });
      // The line that says the errors are over.
      c.on('ready', () => {
        if (failing.delete(c)) this.logger.info('redis connection ready again');
      });
    }
    // Sentinel: a connection is used (written to, read from) only once a majority of the sentinels
    // name its server as the primary; another server is left at once for the next answer.
    this.quorum = this.storage.sentinel
      ? new SentinelQuorum(this.storage, this.connectTimeoutMs, () => this.clock.now())
      : undefined;
    if (this.quorum)
      for (const c of this.connections()) {
        c.on('ready', () => void this.confirm(c));
        c.on('close', () => this.confirmed.delete(c));
      }
    // Cluster: the primaries ioredis' slot map names (after each refresh of it: a MOVED, a node
    // lost), for /readyz and the metrics; another set is a failover (or a resharding) followed.
    if (this.storage.cluster) {
      this.health.cluster = { state: 'unknown', primaries: 0, replicas: 0, unreachable: 0 };
      const cluster = this.redis as Cluster;
      cluster.on('refresh', () => {
        const now = cluster
          .nodes('master')
          .map((n) => `${n.options.host}:${n.options.port}`)
          .sort()
          .join(',');
        if (this.health.primary !== null && now !== this.health.primary) {
          this.health.primaryChanges += 1;
          this.logger.warn('redis cluster primaries changed', {
            from: this.health.primary,
            to: now,
          });
        }
        this.health.primary = now;
      });
      cluster.on('ready', () => (this.health.connected = true));
      cluster.on('close', () => (this.health.connected = false));
    }
    // The command connection's state and server, for /readyz and the metrics: a primary that
    // changed is a failover this instance followed.
    else {
      this.redis.on('ready', () => {
        const was = this.health.primary;
        this.health.connected = true;
        this.health.primary = serverOf(this.redis);
        if (was === null) return;
        this.health.reconnects += 1;
        if (this.health.primary !== was) {
          this.health.primaryChanges += 1;
          this.logger.warn('redis primary changed', { from: was, to: this.health.primary });
        }
      });
      this.redis.on('close', () => (this.health.connected = false));
    }
  }

  /** Every connection of the store, each once: commands, the lease's, followers, call-request waits. */
  private connections(): RedisClient[] {
    return [
      ...new Set([
        this.redis,
        this.leases,
        ...this.readers.map((r) => r.client),
        ...this.bells.map((b) => b.client),
      ]),
    ];
  }

  /** The connections open() connects (the call-request waits connect at their first watch). */
  private openedFirst(): RedisClient[] {
    return [...new Set([this.redis, this.leases, ...this.readers.map((r) => r.client)])];
  }

  /** Where this instance's commands go and what happened to that connection (metrics, /readyz). */
  storageHealth(): StorageHealth {
    return { ...this.health };
  }

  /**
   * Connects, learns each tenant's current end of stream, starts following. A Redis that cannot
   * be used at start fails with a StartupError naming the address (password hidden), the cause
   * and the setting to check; both connections are closed, so nothing retries behind it.
   */
  async open(): Promise<void> {
    try {
      const within = 2 * this.connectTimeoutMs;
      await Promise.all(this.openedFirst().map((c) => connectWithin(c, within)));
      if (this.quorum) await this.whenConfirmed(within);
      for (const tenant of this.tenants) this.lastIds.set(tenant, await this.latest(tenant));
    } catch (err) {
      this.closed = true;
      for (const c of this.connections()) c.disconnect();
      this.quorum?.close();
      throw redisStartupError(
        this.storage.url ?? '',
        this.lastError ?? err,
        this.connectTimeoutMs,
        describeRedisStorage(this.storage),
      );
    }
    this.loops = this.readers.map((r) => this.follow(r.client, r.tenants));
    this.scheduleTrim();
  }

  streamKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:events`;
  }

  private seenKey(tenant: string, eventId: string): string {
    return `${this.prefix}{${tenant}}:seen:${eventId}`;
  }

  /**
   * Asks the sentinels whether the server `c` is connected to is the primary; a connection to
   * another server (an old primary restarted, named by a sentinel not yet told of the failover)
   * is dropped and reconnects, before anything is written to or read from it.
   */
  private async confirm(c: RedisClient): Promise<void> {
    const server = serverOf(c);
    const { primary, votes, vetoes } = await this.quorum!.primary();
    if (this.closed || c.status !== 'ready' || serverOf(c) !== server || !server) return;
    if (primary === server) {
      this.confirmed.set(c, server);
      return;
    }
    this.health.unconfirmedPrimaries += 1;
    this.logger.warn(
      'redis server is not the primary a majority of the sentinels name; reconnecting',
      { server, votes, vetoes },
    );
    c.disconnect(true);
  }

  private isConfirmed(c: RedisClient): boolean {
    return (
      !this.quorum || (this.confirmed.get(c) !== undefined && this.confirmed.get(c) === serverOf(c))
    );
  }

  /** open(): every connection confirmed by the sentinels, or an error after `ms`. */
  private async whenConfirmed(ms: number): Promise<void> {
    const all = this.openedFirst();
    const deadline = this.clock.now() + ms;
    while (!all.every((c) => this.isConfirmed(c))) {
      if (this.clock.now() > deadline)
        throw new Error(
          `no majority of the sentinels named the server connected to within ${ms} ms`,
        );
      await new Promise<void>((r) => this.clock.setTimeout(r, 50));
    }
  }

  /** The key of a tenant's upstream lease (in the tenant's slot, beside its stream). */
  leaseKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:upstream-lease`;
  }

  /** A script of the lease or its terms' tokens, on the lease's connection. */
  private leaseOp(name: string): LeaseCommand {
    return (this.leases as unknown as Record<string, LeaseCommand>)[name]!.bind(this.leases);
  }

  private leaseCommand(name: string): LeaseCommand {
    return (this.redis as unknown as Record<string, LeaseCommand>)[name]!.bind(this.redis);
  }

  /**
   * Sentinel: a lease is taken or renewed like an event is stored: on a server the sentinels
   * confirmed, and acted on only if they still vouch for it afterwards (a lease taken on an old
   * primary during a failover is thrown away with it, and another instance takes the tenant on
   * the new one: two streams to the phone system). Refused, the holder's term runs out on its own
   * clock (gateway/lease.ts).
   */
  async acquireLease(tenant: string, owner: string, ttlMs: number): Promise<string | null> {
    this.assertConfirmed(this.leases);
    const server = serverOf(this.leases);
    const token = await this.leaseOp('relayLeaseAcquire')(
      this.leaseKey(tenant),
      `${this.prefix}{${tenant}}:upstream-fence`,
      owner,
      String(ttlMs),
    );
    if (this.quorum) await this.vouched(server);
    return typeof token === 'string' ? token : null;
  }

  async extendLease(tenant: string, token: string, ttlMs: number): Promise<boolean> {
    this.assertConfirmed(this.leases);
    const server = serverOf(this.leases);
    const extended = this.leaseOp('relayLeaseExtend');
    const ok = (await extended(this.leaseKey(tenant), token, String(ttlMs))) === 1;
    if (this.quorum) await this.vouched(server);
    return ok;
  }

  private assertConfirmed(c: RedisClient = this.redis): void {
    if (!this.isConfirmed(c))
      throw new Error(
        'redis: the server is not (yet) the primary a majority of the sentinels name',
      );
  }

  async releaseLease(tenant: string, token: string): Promise<void> {
    await this.leaseOp('relayLeaseRelease')(this.leaseKey(tenant), token);
  }

  /** The tenant's call requests handed to the lease holder (gateway/call-handoff.ts). */
  private callRequestsKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:call-requests`;
  }

  private callStateKey(tenant: string, id: string): string {
    return `${this.prefix}{${tenant}}:call-request:${id}`;
  }

  /**
   * The tenant's bell: a stream of one entry, added with every request pushed (in the same
   * script), that the holder's blocking read waits on (watchCallRequests). A stream, not a list
   * to pop: reading it takes nothing away, so a bell read by an instance whose term just ended
   * still wakes the next holder, and the requests themselves are only ever taken by the fenced
   * take.
   */
  private callBellKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:call-bell`;
  }

  async pushCallRequest(tenant: string, request: string, max: number): Promise<boolean> {
    const pushed = await this.redis.eval(
      `if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('XADD', KEYS[2], 'MAXLEN', '1', '*', 'r', '1')
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`,
      2,
      this.callRequestsKey(tenant),
      this.callBellKey(tenant),
      request,
      String(max),
      '600000',
    );
    return pushed === 1;
  }

  /**
   * Calls `wake` whenever a request is pushed for `tenant` (by any instance), and once when the
   * wait (re)connects: the holder then takes requests with takeCallRequest. A wake may come with
   * nothing to take (another holder took it, or the reconnection's); none is lost while the
   * connection is up. The tenant stays watched until close(); the remover only drops `wake`.
   */
  watchCallRequests(tenant: string, wake: () => void): () => void {
    return this.watchBell(tenant, this.callBellKey(tenant), wake);
  }

  /**
   * Calls `wake` whenever the holder answers one of `tenant`'s requests (any of them: each waiter
   * reads its own state), and once when the wait (re)connects. As watchCallRequests.
   */
  watchCallAnswers(tenant: string, wake: () => void): () => void {
    return this.watchBell(tenant, this.callAnsweredKey(tenant), wake);
  }

  private watchBell(tenant: string, key: string, wake: () => void): () => void {
    const bell = this.bells.find((b) => b.tenants.includes(tenant));
    if (!bell) throw new Error(`redis: ${tenant} is not one of this store's tenants`);
    let listeners = this.bellListeners.get(key);
    if (!listeners) {
      listeners = new Emitter<[]>(this.logger, 'call request wait');
      this.bellListeners.set(key, listeners);
      bell.keys.push(key);
    }
    const off = listeners.on(wake);
    if (!bell.loop && !this.closed) bell.loop = this.waitForCallRequests(bell);
    return off;
  }

  private async waitForCallRequests(bell: CallBell): Promise<void> {
    const { client } = bell;
    const pause = (ms: number) => new Promise<void>((r) => this.clock.setTimeout(r, ms));
    // Its errors are reported by the store's 'error' listener; it reconnects by itself.
    if (client.status === 'wait') client.connect().catch(() => {});
    while (!this.closed) {
      // Sentinel: only on a server the sentinels confirmed (an old primary has old bells).
      if (client.status !== 'ready' || !this.isConfirmed(client)) {
        await pause(50);
        continue;
      }
      try {
        const keys = [...bell.keys];
        const ids = keys.map((k) => bell.lastIds.get(k) ?? '0-0');
        const reply = (await client.xread('BLOCK', this.blockMs, 'STREAMS', ...keys, ...ids)) as
          [string, [string, string[]][]][] | null;
        for (const [key, entries] of reply ?? []) {
          const last = entries[entries.length - 1];
          if (last === undefined) continue;
          bell.lastIds.set(key, last[0]);
          this.bellListeners.get(key)?.emit();
        }
      } catch (err) {
        if (this.closed) return;
        this.logger.warn('redis call request wait failed; retrying', { error: err });
        await pause(500);
      }
    }
  }

  /** The next request, only while the lease still holds `leaseToken` (fenced in the script). */
  async takeCallRequest(tenant: string, leaseToken: string): Promise<string | null> {
    const taken = await this.redis.eval(
      `if redis.call('GET', KEYS[2]) ~= ARGV[1] then return false end
return redis.call('LPOP', KEYS[1])`,
      2,
      this.callRequestsKey(tenant),
      this.leaseKey(tenant),
      leaseToken,
    );
    return typeof taken === 'string' ? taken : null;
  }

  async claimCallRequest(
    tenant: string,
    id: string,
    leaseToken: string,
    ttlMs: number,
  ): Promise<boolean> {
    const claimed = await this.redis.eval(
      `if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('SET', KEYS[1], 'taken', 'NX', 'PX', ARGV[2]) then return 1 end
return 0`,
      2,
      this.callStateKey(tenant, id),
      this.leaseKey(tenant),
      leaseToken,
      String(ttlMs),
    );
    return claimed === 1;
  }

  callRequestState(tenant: string, id: string): Promise<string | null> {
    return this.redis.get(this.callStateKey(tenant, id));
  }

  /** The tenant's answers' bell: rung with every answer (its waiters then read their states). */
  private callAnsweredKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:call-answered`;
  }

  async answerCallRequest(
    tenant: string,
    id: string,
    answer: string,
    ttlMs: number,
  ): Promise<void> {
    await this.redis.eval(
      `redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '1', '*', 'a', '1')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`,
      2,
      this.callStateKey(tenant, id),
      this.callAnsweredKey(tenant),
      `done:${answer}`,
      String(ttlMs),
    );
  }

  async expireCallRequest(tenant: string, id: string, ttlMs: number): Promise<string | null> {
    const before = await this.redis.eval(
      `local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], 'expired', 'PX', ARGV[1])
return false`,
      1,
      this.callStateKey(tenant, id),
      String(ttlMs),
    );
    return typeof before === 'string' ? before : null;
  }

  /** The key of the tokens the lease's terms were given (gateway/term-tokens.ts). */
  termTokensKey(tenant: string): string {
    return `${this.prefix}{${tenant}}:upstream-tokens`;
  }

  async recordTermToken(
    tenant: string,
    field: string,
    value: string,
    expiresAt: number,
    now: number,
  ): Promise<void> {
    const record = this.leaseOp('relayTermToken');
    await record(
      this.termTokensKey(tenant),
      field,
      value,
      String(Math.ceil(expiresAt)),
      String(now),
    );
  }

  listTermTokens(tenant: string): Promise<Record<string, string>> {
    return this.leases.hgetall(this.termTokensKey(tenant));
  }

  async forgetTermTokens(tenant: string, fields: readonly string[]): Promise<void> {
    if (fields.length > 0) await this.leases.hdel(this.termTokensKey(tenant), ...fields);
  }

  /**
   * `append`, for the holder of the tenant's upstream lease: refused (FencedError) unless the
   * lease still holds `token` when the event lands.
   */
  async appendFenced(e: NewEvent, token: string): Promise<AppendResult> {
    this.assertConfirmed();
    let sent: { id: string | null; acked?: number };
    try {
      sent = await this.runAppend('relayFencedAppend', [
        this.seenKey(e.tenant, e.eventId),
        this.streamKey(e.tenant),
        this.leaseKey(e.tenant),
        ...this.appendArgs(e),
        token,
      ]);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('FENCED')) throw new FencedError();
      throw err;
    }
    return this.appended(e, sent.id, sent.acked);
  }

  /**
   * Runs an append script. In a Cluster with minReplicas, its WAIT goes in one pipeline with it:
   * a pipeline's commands share the node of their keys' slot and its one connection (WAIT counts
   * that connection's writes), where a WAIT sent alone would go to any node. A pipeline whose
   * script is answered MOVED (the slot moved: a failover) fails, the slots are learnt again, and
   * the webhook is retried.
   */
  private async runAppend<T = string | null>(
    name: 'relayAppend' | 'relayFencedAppend' | 'relayAppendAll',
    args: (string | number)[],
  ): Promise<{ id: T; acked?: number }> {
    if (!this.storage.cluster || this.storage.minReplicas === 0) {
      const command = (
        this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<T>>
      )[name]!;
      return { id: await command.call(this.redis, ...args) };
    }
    const pipeline = this.redis.pipeline() as unknown as Record<
      string,
      (...a: (string | number)[]) => unknown
    > & { wait(n: number, ms: number): { exec(): Promise<[Error | null, unknown][] | null> } };
    pipeline[name]!(...args);
    const results = await pipeline
      .wait(this.storage.minReplicas, this.storage.replicaTimeoutMs)
      .exec();
    const [append, wait] = results ?? [];
    if (!append || !wait) throw new Error('redis: the append pipeline was not answered');
    // ioredis follows a MOVED within a pipeline only when every command got it (WAIT, keyless,
    // does not), and then leaves its slot map as it was: learn the slots again, or every later
    // append would go to the old primary (a replica now) and fail the same way.
    if (append[0] && /^(MOVED|ASK|CLUSTERDOWN|TRYAGAIN)\b/.test(append[0].message))
      (this.redis as Cluster).refreshSlotsCache();
    if (append[0]) throw append[0];
    if (wait[0]) throw wait[0];
    return { id: append[1] as T, acked: Number(wait[1]) };
  }

  private appendArgs(e: NewEvent): string[] {
    return [
      String(this.retention.dedupeTtlMs),
      String(this.retention.maxEvents),
      e.eventId,
      String(e.event),
      e.to ?? '',
      String(e.receivedAt),
      e.body,
      this.storage.minReplicas > 0 ? '1' : '0',
    ];
  }

  /**
   * An append's answer. With minReplicas, a duplicate is answered only once the replicas have
   * the original too: the script touched its marker (a write after the original's, in the one
   * replication stream), so WAIT covers both. A webhook whose first WAIT failed (503) is retried
   * as a duplicate: it must not be acknowledged before the event is where a failover keeps it.
   */
  private async appended(e: NewEvent, id: string | null, acked?: number): Promise<AppendResult> {
    return (await this.allAppended(e.tenant, [id], acked))[0]!;
  }

  /** The same, for the events of one tenant stored by one script: one WAIT, one vouching. */
  private async allAppended(
    tenant: string,
    ids: (string | null)[],
    acked?: number,
  ): Promise<AppendResult[]> {
    const server = serverOf(this.redis);
    if (this.storage.minReplicas > 0) await this.replicated(acked);
    if (this.quorum) await this.vouched(server);
    return ids.map((id) => {
      if (!id) return { status: 'duplicate' };
      const prev = this.lastAppended.get(tenant);
      if (!prev || compareCursors(id, prev) > 0) this.lastAppended.set(tenant, id);
      return { status: 'stored', cursor: id };
    });
  }

  /**
   * Waits until `minReplicas` replicas have every write of this connection (Redis WAIT), or
   * fails: the webhook is answered 503 and the service retries it. `acked`: a Cluster's answer,
   * from the WAIT pipelined with the append (runAppend).
   */
  private async replicated(pipelined?: number): Promise<void> {
    const acked =
      pipelined ??
      (await (this.redis as Redis).wait(this.storage.minReplicas, this.storage.replicaTimeoutMs));
    if (acked >= this.storage.minReplicas) return;
    this.health.waitFailures += 1;
    throw new Error(
      `redis: the event reached ${acked} of ${this.storage.minReplicas} replicas within ${this.storage.replicaTimeoutMs} ms`,
    );
  }

  /**
   * Sentinel: the webhook (or a lease, above) is acknowledged only if, once its event is stored (and on the replicas),
   * a majority of the sentinels still name the server it was stored on and none sees a failover of
   * it under way (SentinelQuorum). A failover that began after the connection was confirmed (the
   * old primary restarted while the sentinels still had it down) would otherwise throw away what
   * was acknowledged: the webhook is answered 503 instead and the service retries it.
   */
  private async vouched(server: string | null): Promise<void> {
    const { primary, votes, vetoes } = await this.quorum!.primaryAsOf(this.clock.now());
    if (primary !== null && primary === server && serverOf(this.redis) === server) return;
    this.health.unvouchedWrites += 1;
    throw new Error(
      `redis: the sentinels do not vouch for the server the event was stored on (${server ?? 'none'}; named: ${JSON.stringify(votes)}${vetoes.length > 0 ? `; down or failing over: ${vetoes.join(' ')}` : ''})`,
    );
  }

  async append(e: NewEvent): Promise<AppendResult> {
    this.assertConfirmed();
    const { id, acked } = await this.runAppend('relayAppend', [
      this.seenKey(e.tenant, e.eventId),
      this.streamKey(e.tenant),
      ...this.appendArgs(e),
    ]);
    return this.appended(e, id, acked);
  }

  /** One script for the whole delivery (APPEND_ALL_SCRIPT); a single event as `append`. */
  async appendAll(events: readonly NewEvent[]): Promise<AppendResult[]> {
    if (events.length === 0) return [];
    if (events.length === 1) return [await this.append(events[0]!)];
    return this.appendAllWith(events, '');
  }

  /** `appendAll` for the lease holder: nothing stored unless the lease still holds `token`. */
  async appendAllFenced(events: readonly NewEvent[], token: string): Promise<AppendResult[]> {
    if (events.length === 0) return [];
    if (events.length === 1) return [await this.appendFenced(events[0]!, token)];
    try {
      return await this.appendAllWith(events, token);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('FENCED')) throw new FencedError();
      throw err;
    }
  }

  private async appendAllWith(events: readonly NewEvent[], token: string): Promise<AppendResult[]> {
    const tenant = events[0]!.tenant;
    if (events.some((e) => e.tenant !== tenant))
      throw new Error('appendAll: the events of one delivery are of one tenant');
    this.assertConfirmed();
    const args: string[] = [
      String(this.retention.dedupeTtlMs),
      String(this.retention.maxEvents),
      this.storage.minReplicas > 0 ? '1' : '0',
      token,
    ];
    for (const e of events)
      args.push(e.eventId, String(e.event), e.to ?? '', String(e.receivedAt), e.body);
    const { id: ids, acked } = await this.runAppend<(string | null)[]>('relayAppendAll', [
      events.length + 2,
      this.streamKey(tenant),
      this.leaseKey(tenant),
      ...events.map((e) => this.seenKey(tenant, e.eventId)),
      ...args,
    ]);
    return this.allAppended(
      tenant,
      events.map((_, i) => ids[i] ?? null),
      acked,
    );
  }

  async readAfter(tenant: string, cursor: string, limit: number): Promise<ReadResult> {
    const key = this.streamKey(tenant);
    const entries = (await this.redis.xrangeBuffer(key, `(${cursor}`, '+', 'COUNT', limit)) as [
      Buffer,
      Buffer[],
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

  subscribe(listener: (events: readonly StoredEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async published(timeoutMs: number): Promise<void> {
    if (this.allFollowed()) return;
    await waitFor((done) => this.publishWaiters.push(done), timeoutMs);
  }

  /** True when the follower has handed over everything this instance appended. */
  private allFollowed(): boolean {
    for (const [tenant, id] of this.lastAppended) {
      const seen = this.lastIds.get(tenant);
      if (!seen || compareCursors(seen, id) < 0) return false;
    }
    return true;
  }

  async ping(): Promise<void> {
    if (this.storage.cluster) await this.clusterCheck(this.redis as Cluster);
    else await this.redis.ping();
  }

  /**
   * Cluster readiness: a PING answers from any node, even while the cluster refuses every command
   * (cluster_state:fail) or a primary is gone. Every primary ioredis knows is asked CLUSTER INFO
   * at once (each bounded by commandTimeoutMs): ready while a majority of those that answer say
   * cluster_state:ok. A node that does not answer makes ioredis learn the slots again (a replica
   * promoted in its place). The first answering node's CLUSTER NODES gives the counts.
   */
  private async clusterCheck(cluster: Cluster): Promise<void> {
    const primaries = cluster.nodes('master');
    const answers = await Promise.all(
      primaries.map((n) => (n.call('CLUSTER', 'INFO') as Promise<string>).then(String, () => null)),
    );
    const answered = answers.filter((a): a is string => a !== null);
    const unreachable = answers.length - answered.length;
    if (unreachable > 0) cluster.refreshSlotsCache();
    const ok = answered.filter((a) => /^cluster_state:ok\b/m.test(a)).length;
    const state = ok * 2 > answered.length ? 'ok' : 'fail';
    const at = primaries[answers.findIndex((a) => a !== null)];
    const counted = at
      ? String(await at.call('CLUSTER', 'NODES').catch(() => ''))
          .split('\n')
          .map((line) => line.split(' '))
          .filter((f) => f.length >= 8 && !/(^|,)(fail\??|handshake|noaddr)(,|$)/.test(f[2]!))
      : [];
    this.health.cluster = {
      state: answered.length === 0 ? 'unknown' : state,
      primaries: counted.filter((f) => /(^|,)master(,|$)/.test(f[2]!) && f.length > 8).length,
      replicas: counted.filter((f) => /(^|,)slave(,|$)/.test(f[2]!)).length,
      unreachable,
    };
    if (answered.length === 0) throw new Error('redis cluster: no primary answers');
    if (state !== 'ok')
      throw new Error(
        `redis cluster: cluster_state:fail on ${answered.length - ok} of the ${answered.length} primaries that answer`,
      );
  }

  /** In the tenant's slot; the call id is validated by the route (CALL_ID_PATTERN). */
  async claimCall(tenant: string, callId: string, user: string, ttlMs: number): Promise<string> {
    const holder = await this.leaseCommand('relayClaimCall')(
      `${this.prefix}{${tenant}}:claim:${callId}`,
      user,
      String(Math.max(1, Math.round(ttlMs))),
    );
    if (typeof holder !== 'string') throw new Error('redis: the claim was not stored');
    return holder;
  }

  /**
   * Stops following and closes the connections. Never waits on a Redis that is gone or hung: a
   * QUIT is sent only to a connected server and given commandTimeoutMs (a QUIT to a server that is
   * reconnecting never settles, which held the relay's shutdown for ever).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clock.clearTimeout(this.trimTimer);
    for (const r of this.readers) r.client.disconnect();
    for (const b of this.bells) b.client.disconnect();
    this.quorum?.close();
    // The follower stops at its next turn; a read cut by the disconnect of a reconnecting client
    // can take seconds to be rejected, and nothing waits on it.
    const loops = [...this.loops, ...this.bells.map((b) => b.loop)];
    await waitFor((done) => void Promise.allSettled(loops).then(() => done()), 500);
    if (this.redis.status === 'ready')
      await waitFor((done) => void this.redis.quit().then(done, done), this.commandTimeoutMs);
    this.redis.disconnect();
    this.leases.disconnect(); // the lease was given back before (the upstream stops first)
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

  private async follow(reader: RedisClient, tenants: readonly string[]): Promise<void> {
    const keys = tenants.map((t) => this.streamKey(t));
    while (!this.closed) {
      // Sentinel: not from a server the sentinels have not confirmed (it holds an old stream).
      if (!this.isConfirmed(reader)) {
        await new Promise<void>((r) => this.clock.setTimeout(r, 50));
        continue;
      }
      try {
        const ids = tenants.map((t) => this.lastIds.get(t) ?? '0-0');
        const reply = (await reader.xreadBuffer(
          'COUNT',
          1000,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          ...keys,
          ...ids,
        )) as [Buffer, [Buffer, Buffer[]][]][] | null;
        if (!reply) continue;
        for (const [key, entries] of reply) {
          const tenant = tenants[keys.indexOf(key.toString())]!;
          if (entries.length === 0) continue;
          const events = entries.map(([id, fields]) => toEvent(tenant, id, fields));
          this.lastIds.set(tenant, events[events.length - 1]!.cursor);
          for (const l of this.listeners) l(events);
        }
        if (this.publishWaiters.length > 0 && this.allFollowed())
          for (const w of this.publishWaiters.splice(0)) w();
      } catch (err) {
        if (this.closed) return;
        this.logger.warn('redis follow failed; retrying', { error: err });
        await new Promise<void>((r) => this.clock.setTimeout(r, 500));
      }
    }
  }

  private scheduleTrim(): void {
    this.trimTimer = this.clock.setTimeout(() => {
      const minId = `${Math.max(0, this.clock.now() - this.retention.maxAgeMs)}-0`;
      Promise.all(this.tenants.map((t) => this.redis.xtrim(this.streamKey(t), 'MINID', '~', minId)))
        .catch((err: Error) => this.logger.warn('redis trim failed', { error: err }))
        .finally(() => {
          if (!this.closed) this.scheduleTrim();
        });
    }, 60_000);
  }
}

/** The address the connection is connected to (`host:port`), or null. */
function serverOf(c: RedisClient): string | null {
  const stream = (c as Redis).stream as { remoteAddress?: string; remotePort?: number } | undefined;
  return stream?.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort}` : null;
}

/**
 * A stream entry as an event. Read as bytes (ioredis' *Buffer commands): the body stays the bytes
 * it was stored as and goes into frames without passing through the JS heap as a string (a replay
 * to many clients, or a busy live feed, would otherwise make the heap grow).
 */
function toEvent(tenant: string, cursor: Buffer, fields: Buffer[]): StoredEvent {
  let body: Buffer = Buffer.alloc(0);
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString('latin1');
    if (name === 'body') body = fields[i + 1]!;
    else f[name] = fields[i + 1]!.toString('utf8');
  }
  return {
    tenant,
    cursor: cursor.toString('latin1'),
    eventId: f.id ?? '',
    event: Number(f.ev),
    to: f.to ? f.to : null,
    receivedAt: Number(f.at),
    body,
  };
}
