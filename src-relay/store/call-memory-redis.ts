/**
 * The Yeastar call memory shared by every relay instance of a tenant (issue 40 item 3): one key per
 * call in the tenant's slot, `<prefix>{<tenant>}:call:<digest of the call id>`, a hash of `v` (a
 * version) and `m` (the decoder's memory of the call, YeastarEventDecoder.exportCall's text). A
 * report is decoded under compare-and-set: read (version, memory), decode in TypeScript, store only
 * if the version is still the one read (CAS_SCRIPT), else read again and decode again. The Lua
 * stores the facts and never decides: the rule stays in src-shared/phone-systems/yeastar-p-series.ts.
 * Bounded: the decoder caps a call's legs (YEASTAR_MAX_LEGS) and the key expires with the call
 * (the decoder's own TTLs for a call going on and for an ended one).
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.ts';

/** What the intake needs of a shared call memory. */
export interface SharedCallMemory {
  read(tenant: string, callId: string): Promise<{ version: number; memory: string | null }>;
  /** Stores `memory` if the call's version is still `version`; false when another report won. */
  write(
    tenant: string,
    callId: string,
    version: number,
    memory: string,
    ttlMs: number,
  ): Promise<boolean>;
}

const CAS_SCRIPT = `
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', v + 1, 'm', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

type CasRedis = RedisClient & {
  relayCallMemoryCas(key: string, version: string, memory: string, ttl: string): Promise<number>;
};

export class RedisCallMemory implements SharedCallMemory {
  private readonly redis: CasRedis;
  private readonly prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.prefix = prefix;
    redis.defineCommand('relayCallMemoryCas', { numberOfKeys: 1, lua: CAS_SCRIPT });
    this.redis = redis as CasRedis;
  }

  private key(tenant: string, callId: string): string {
    // The call id comes from outside: a digest keeps the key short and its characters plain.
    const id = createHash('sha256').update(callId).digest('base64url').slice(0, 22);
    return `${this.prefix}{${tenant}}:call:${id}`;
  }

  async read(tenant: string, callId: string): Promise<{ version: number; memory: string | null }> {
    const [v, m] = await this.redis.hmget(this.key(tenant, callId), 'v', 'm');
    return { version: Number(v ?? 0) || 0, memory: m ?? null };
  }

  async write(
    tenant: string,
    callId: string,
    version: number,
    memory: string,
    ttlMs: number,
  ): Promise<boolean> {
    const done = await this.redis.relayCallMemoryCas(
      this.key(tenant, callId),
      String(version),
      memory,
      String(Math.max(1, Math.round(ttlMs))),
    );
    return done === 1;
  }
}
