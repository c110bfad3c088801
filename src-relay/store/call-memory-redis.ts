/**
 * The Yeastar call memory shared by every relay instance of a tenant (issue 40 item 3): a call's
 * reports may reach any instance (webhooks behind a load balancer, the upstream lease taken over
 * mid-call) and are decoded against one memory, one report after the other.
 *
 * Layout, in the tenant's slot beside its stream (`{tenant}` hash tag):
 * - `<prefix>{<tenant>}:calls`  hash: a digest of the call id -> `<version>:<expires at, ms>:<the
 *   intake's memory of the call>`: the decoder's (YeastarEventDecoder.exportCall's text) and the
 *   events of the call's newest reports, for a report retried after its append failed
 *   (yeastar-intake.ts; the script sees one opaque text)
 * - `<prefix>{<tenant>}:calls:expiry`  sorted set: each call by its expiry time
 * - `<prefix>{<tenant>}:calls:bytes`  the bytes the hash holds (fields and values)
 *
 * A report costs two round trips: READ (the call's version and memory, unless expired), then the
 * decoder runs in TypeScript, then WRITE, a compare-and-set on the version read: the new memory
 * is kept only if the call's version is still the one read, else the intake reads and decodes
 * again (yeastar-intake.ts). The scripts store facts and never decide: the rule stays in
 * src-shared/phone-systems/yeastar-p-series.ts. Times are the Redis server's (TIME), so the
 * instances' clocks do not matter. A lease holder's WRITE carries its term's token and is refused
 * (FencedError) once the tenant's upstream lease is another's: a holder paused past its term must
 * not move a call's memory on with reports the next holder decodes too.
 *
 * Bounded per tenant by the decoder's own bounds (src-shared/phone-systems/yeastar-p-series.ts): a
 * call is kept for the time the intake asks (6 hours going on, 2 minutes ended), from its last
 * report; at most YEASTAR_MAX_LIVE_CALLS + YEASTAR_MAX_ENDED_CALLS calls and YEASTAR_LIVE_BYTES +
 * YEASTAR_ENDED_BYTES bytes. Each WRITE removes calls past their time, then, while over a bound,
 * the call that would expire soonest (ended calls before calls going on), never the one written;
 * at most 64 of each per report. The three keys expire together 6 hours after the last WRITE.
 */
import { createHash } from 'node:crypto';
import {
  YEASTAR_CALL_TTL_MS,
  YEASTAR_ENDED_BYTES,
  YEASTAR_LIVE_BYTES,
  YEASTAR_MAX_ENDED_CALLS,
  YEASTAR_MAX_LIVE_CALLS,
} from '../../src-shared/phone-systems/yeastar-p-series.ts';
import type { RedisClient } from './redis-connection.ts';
import { FencedError } from './types.ts';

/** What the intake needs of a shared call memory. */
export interface SharedCallMemory {
  read(tenant: string, callId: string): Promise<{ version: number; memory: string | null }>;
  /**
   * Stores `memory` if the call's version is still `version`; false when another report won.
   * With `fence` (a lease holder's token), rejects with FencedError unless the tenant's upstream
   * lease still holds it.
   */
  write(
    tenant: string,
    callId: string,
    version: number,
    memory: string,
    ttlMs: number,
    fence?: string,
  ): Promise<boolean>;
}

/** The server's time in ms, and whether a stored value is before its expiry. */
const NOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function alive(v)
  if not v then return false end
  local x = tonumber(string.match(v, '^%d+:(%d+):'))
  return x ~= nil and x > now
end
`;

/** KEYS[1] the calls; ARGV[1] the call's field. Its value, or false (none, or expired). */
const READ_SCRIPT = `${NOW_LUA}
local v = redis.call('HGET', KEYS[1], ARGV[1])
if alive(v) then return v end
return false
`;

/**
 * KEYS: 1 calls, 2 expiry, 3 bytes, 4 the tenant's upstream lease.
 * ARGV: 1 the call's field, 2 the version read (0: none), 3 the memory, 4 its time (ms), 5 calls
 * at most, 6 bytes at most, 7 a lease holder's token ('' for a webhook), 8 the keys' time (ms).
 * 1 when stored, 0 when another report changed the call since it was read.
 */
const WRITE_SCRIPT = `
if ARGV[7] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[7] then
  return redis.error_reply('FENCED the upstream lease is not held with this token')
end
${NOW_LUA}
local id = ARGV[1]
local old = redis.call('HGET', KEYS[1], id)
local version = 0
if alive(old) then version = tonumber(string.match(old, '^(%d+):')) end
if version ~= tonumber(ARGV[2]) then return 0 end
local expires = now + tonumber(ARGV[4])
local value = (version + 1) .. ':' .. expires .. ':' .. ARGV[3]
local held = tonumber(redis.call('GET', KEYS[3]) or '0')
if old then held = held - #old - #id end
held = held + #value + #id
redis.call('HSET', KEYS[1], id, value)
redis.call('ZADD', KEYS[2], expires, id)
local function drop(other)
  local v = redis.call('HGET', KEYS[1], other)
  if v then
    held = held - #v - #other
    redis.call('HDEL', KEYS[1], other)
  end
  redis.call('ZREM', KEYS[2], other)
end
for _, other in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 64)) do
  drop(other)
end
local n = 0
while n < 64 and (redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[5]) or held > tonumber(ARGV[6])) do
  local first = redis.call('ZRANGE', KEYS[2], 0, 1)
  local other = first[1]
  if other == id then other = first[2] end
  if not other then break end
  drop(other)
  n = n + 1
end
redis.call('SET', KEYS[3], held, 'PX', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
return 1
`;

export interface RedisCallMemoryOptions {
  /** The tenant's upstream lease (a fenced write's check). */
  leaseKey: (tenant: string) => string;
  /** Commands may go to the connection (Sentinel: a majority named its server the primary). */
  usable?: () => boolean;
  /** Calls per tenant at most; default YEASTAR_MAX_LIVE_CALLS + YEASTAR_MAX_ENDED_CALLS. */
  maxCalls?: number;
  /** Bytes per tenant at most; default YEASTAR_LIVE_BYTES + YEASTAR_ENDED_BYTES. */
  maxBytes?: number;
}

type CallRedis = RedisClient & {
  relayCallMemoryRead(calls: string, id: string): Promise<string | null>;
  relayCallMemoryWrite(...args: string[]): Promise<number>;
};

export class RedisCallMemory implements SharedCallMemory {
  /** Round trips so far, and writes that lost to another report (the bench reads them). */
  readonly counts = { reads: 0, writes: 0, lost: 0 };
  private readonly redis: CallRedis;
  private readonly prefix: string;
  private readonly options: RedisCallMemoryOptions;
  private readonly maxCalls: string;
  private readonly maxBytes: string;

  constructor(redis: RedisClient, prefix: string, options: RedisCallMemoryOptions) {
    this.prefix = prefix;
    this.options = options;
    redis.defineCommand('relayCallMemoryRead', { numberOfKeys: 1, lua: READ_SCRIPT });
    redis.defineCommand('relayCallMemoryWrite', { numberOfKeys: 4, lua: WRITE_SCRIPT });
    this.redis = redis as CallRedis;
    this.maxCalls = String(options.maxCalls ?? YEASTAR_MAX_LIVE_CALLS + YEASTAR_MAX_ENDED_CALLS);
    this.maxBytes = String(options.maxBytes ?? YEASTAR_LIVE_BYTES + YEASTAR_ENDED_BYTES);
  }

  private calls(tenant: string): string {
    return `${this.prefix}{${tenant}}:calls`;
  }

  /** The call id comes from outside: a digest keeps the field short and its characters plain. */
  private field(callId: string): string {
    return createHash('sha256').update(callId).digest('base64url').slice(0, 22);
  }

  private assertUsable(): void {
    if (this.options.usable && !this.options.usable())
      throw new Error(
        'redis: the server is not (yet) the primary a majority of the sentinels name',
      );
  }

  async read(tenant: string, callId: string): Promise<{ version: number; memory: string | null }> {
    this.assertUsable();
    this.counts.reads += 1;
    const value = await this.redis.relayCallMemoryRead(this.calls(tenant), this.field(callId));
    if (value === null) return { version: 0, memory: null };
    const first = value.indexOf(':');
    const second = value.indexOf(':', first + 1);
    const version = Number(value.slice(0, first));
    if (first <= 0 || second < 0 || !Number.isSafeInteger(version))
      return { version: 0, memory: null };
    return { version, memory: value.slice(second + 1) };
  }

  async write(
    tenant: string,
    callId: string,
    version: number,
    memory: string,
    ttlMs: number,
    fence?: string,
  ): Promise<boolean> {
    this.assertUsable();
    this.counts.writes += 1;
    const calls = this.calls(tenant);
    let done: number;
    try {
      done = await this.redis.relayCallMemoryWrite(
        calls,
        `${calls}:expiry`,
        `${calls}:bytes`,
        this.options.leaseKey(tenant),
        this.field(callId),
        String(version),
        memory,
        String(Math.max(1, Math.round(ttlMs))),
        this.maxCalls,
        this.maxBytes,
        fence ?? '',
        String(YEASTAR_CALL_TTL_MS),
      );
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('FENCED')) throw new FencedError();
      throw err;
    }
    if (done !== 1) this.counts.lost += 1;
    return done === 1;
  }
}
