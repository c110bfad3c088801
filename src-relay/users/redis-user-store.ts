import { Cluster } from 'ioredis';
import {
  connectWithin,
  createRedisConnection,
  describeRedisStorage,
  type RedisClient,
  type RedisStorage,
} from '../store/redis-connection.ts';
import { Emitter } from '../../src-shared/kit/emitter.ts';
import { silentLogger, type Logger } from '../../src-shared/process/log.ts';
import { redisStartupError } from '../startup-errors.ts';
import { newDeviceId } from './secrets.ts';
import { UserState } from './user-state.ts';
import type {
  DeviceRecord,
  NewUser,
  RedeemResult,
  UserChange,
  UserRecord,
  UserStore,
} from './types.ts';
import { EmailTakenError, NoSuchUserError, UserExistsError } from './types.ts';
import { canonicalEmail, emailKey } from '../../src-shared/rules/email-address.ts';

/**
 * Users in the Redis the event store uses, shared by every relay instance (and the `relay users`
 * command, which talks to the same Redis). Keys, all under the `{users}` hash tag (one cluster
 * slot, so each change is one script):
 * - `<prefix>{users}:<tenant>:users`    hash: name -> user record (JSON)
 * - `<prefix>{users}:<tenant>:devices`  hash: SHA-256 of a device credential -> device (JSON)
 * - `<prefix>{users}:code:<sha256>`     a pending enrolment code (JSON), expiring a day after it lapses
 * Every change is published on `<prefix>users-changed` as `{"tenant","user"}`; each instance then
 * re-checks that user's open sessions. Each rule is one Lua script, so a code is spent once even
 * when two instances redeem it at the same moment.
 */
/**
 * KEYS: users, devices, addresses; ARGV: name, user JSON, channel, change JSON, the address as
 * canonicalEmail gives it (empty: none). (A revoked user's devices are already gone.) The
 * addresses hash (canonical address -> name) makes "one active user per address" part of the same
 * script, so two instances adding one address at the same instant cannot both pass.
 */
const ADD = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and cjson.decode(old).revokedAt == cjson.null then return 'exists' end
if ARGV[5] ~= '' then
  local holder = redis.call('HGET', KEYS[3], ARGV[5])
  if holder and holder ~= ARGV[1] then
    local h = redis.call('HGET', KEYS[1], holder)
    if h and cjson.decode(h).revokedAt == cjson.null then return 'email:' .. holder end
  end
  redis.call('HSET', KEYS[3], ARGV[5], ARGV[1])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 'ok'
`;

/** KEYS: users, code; ARGV: name, code JSON, time to live. */
const ISSUE = `
local u = redis.call('HGET', KEYS[1], ARGV[1])
if not u or cjson.decode(u).revokedAt ~= cjson.null then return 'no-user' end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 'ok'
`;

/** KEYS: code, users, devices; ARGV: tenant, now, credential hash, device JSON, channel. */
const REDEEM = `
local c = redis.call('GET', KEYS[1])
if not c then return {'unknown'} end
redis.call('DEL', KEYS[1])
local code = cjson.decode(c)
if code.tenant ~= ARGV[1] then return {'unknown'} end
if code.expiresAt <= tonumber(ARGV[2]) then return {'expired'} end
local u = redis.call('HGET', KEYS[2], code.user)
if not u then return {'revoked'} end
local user = cjson.decode(u)
if user.revokedAt ~= cjson.null or code.createdAt < user.createdAt then return {'revoked'} end
local device = cjson.decode(ARGV[4])
device.user = code.user
local dj = cjson.encode(device)
redis.call('HSET', KEYS[3], ARGV[3], dj)
redis.call('PUBLISH', ARGV[5], cjson.encode({tenant = ARGV[1], user = code.user}))
return {'ok', u, dj}
`;

/** KEYS: users, devices; ARGV: name, now, channel, change JSON. */
const REVOKE = `
local u = redis.call('HGET', KEYS[1], ARGV[1])
if not u then return 0 end
local user = cjson.decode(u)
if user.revokedAt == cjson.null then user.revokedAt = tonumber(ARGV[2]) end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(user))
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  if cjson.decode(all[i + 1]).user == ARGV[1] then redis.call('HDEL', KEYS[2], all[i]) end
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

/**
 * KEYS: users, devices; ARGV: address (lower case), now, channel, tenant, record JSON for an
 * address nobody has. Revokes every user with the address, or the user named by it, or records
 * it as a revoked user of its own; returns the names.
 */
const REVOKE_ADDRESS = `
local names = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local u = cjson.decode(all[i + 1])
  if type(u.email) == 'string' and string.lower(u.email) == ARGV[1] then table.insert(names, all[i]) end
end
if #names == 0 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then table.insert(names, ARGV[1]) end
if #names == 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[5])
  table.insert(names, ARGV[1])
else
  for _, name in ipairs(names) do
    local user = cjson.decode(redis.call('HGET', KEYS[1], name))
    if user.revokedAt == cjson.null then user.revokedAt = tonumber(ARGV[2]) end
    redis.call('HSET', KEYS[1], name, cjson.encode(user))
  end
  local devices = redis.call('HGETALL', KEYS[2])
  for i = 1, #devices, 2 do
    local owner = cjson.decode(devices[i + 1]).user
    for _, name in ipairs(names) do
      if owner == name then redis.call('HDEL', KEYS[2], devices[i]) end
    end
  end
end
for _, name in ipairs(names) do
  redis.call('PUBLISH', ARGV[3], cjson.encode({tenant = ARGV[4], user = name}))
end
return names
`;

type Script = (...args: string[]) => Promise<unknown>;

export interface RedisUserStoreOptions {
  /** A single Redis (tests); or `storage`, the config's settings (Sentinel, Cluster). */
  url?: string;
  storage?: RedisStorage;
  keyPrefix?: string;
  logger?: Logger;
  commandTimeoutMs?: number;
}

export class RedisUserStore implements UserStore {
  readonly kind = 'redis' as const;
  private readonly redis: RedisClient;
  private subscriber: RedisClient | undefined;
  private readonly prefix: string;
  private readonly storage: RedisStorage;
  private readonly connectTimeoutMs: number;
  private readonly logger: Logger;
  private readonly changes: Emitter<[UserChange]>;
  private lastError: Error | undefined;

  constructor(options: RedisUserStoreOptions) {
    this.prefix = options.keyPrefix ?? 'relay:';
    const timeout = options.commandTimeoutMs ?? 2_000;
    this.storage = options.storage ?? {
      kind: 'redis',
      url: options.url,
      commandTimeoutMs: timeout,
      minReplicas: 0,
      replicaTimeoutMs: 1_000,
      upstreamLeaseMs: 10_000,
    };
    this.logger = (options.logger ?? silentLogger).child({ component: 'users' });
    this.changes = new Emitter(this.logger, 'users-change');
    this.connectTimeoutMs = Math.max(timeout, 1_000);
    this.redis = createRedisConnection(this.storage, {
      connectTimeoutMs: this.connectTimeoutMs,
      maxRetriesPerRequest: 1,
      commandTimeoutMs: timeout,
    });
    this.redis.on('error', (err: Error) => {
      this.lastError = err;
      this.logger.warn('redis error', { error: err });
    });
    this.redis.defineCommand('usersAdd', { numberOfKeys: 3, lua: ADD });
    this.redis.defineCommand('usersIssue', { numberOfKeys: 2, lua: ISSUE });
    this.redis.defineCommand('usersRedeem', { numberOfKeys: 3, lua: REDEEM });
    this.redis.defineCommand('usersRevoke', { numberOfKeys: 2, lua: REVOKE });
    this.redis.defineCommand('usersRevokeAddress', { numberOfKeys: 2, lua: REVOKE_ADDRESS });
  }

  private get channel(): string {
    return `${this.prefix}users-changed`;
  }

  private usersKey(tenant: string): string {
    return `${this.prefix}{users}:${tenant}:users`;
  }

  private devicesKey(tenant: string): string {
    return `${this.prefix}{users}:${tenant}:devices`;
  }

  /** Canonical address -> the name of the user added with it (the ADD script's check). */
  private addressesKey(tenant: string): string {
    return `${this.prefix}{users}:${tenant}:addresses`;
  }

  private codeKey(hash: string): string {
    return `${this.prefix}{users}:code:${hash}`;
  }

  private script(name: string): Script {
    return (this.redis as unknown as Record<string, Script>)[name]!.bind(this.redis);
  }

  async open(): Promise<void> {
    try {
      await connectWithin(this.redis, 2 * this.connectTimeoutMs);
    } catch (err) {
      this.redis.disconnect();
      throw redisStartupError(
        this.storage.url ?? '',
        this.lastError ?? err,
        2_000,
        describeRedisStorage(this.storage),
      );
    }
  }

  /** Starts listening for changes made by any instance or the `relay users` command. */
  async follow(): Promise<void> {
    const sub = createRedisConnection(this.storage, {
      connectTimeoutMs: this.connectTimeoutMs,
      maxRetriesPerRequest: null,
    });
    sub.on('error', (err: Error) => this.logger.warn('redis error', { error: err }));
    sub.on('message', (_channel: string, text: string) => {
      try {
        const change = JSON.parse(text) as UserChange;
        if (typeof change.tenant === 'string' && typeof change.user === 'string')
          this.changes.emit({ tenant: change.tenant, user: change.user });
      } catch {
        this.logger.warn('users change message not understood');
      }
    });
    this.subscriber = sub;
    await sub.connect();
    await sub.subscribe(this.channel);
  }

  async close(): Promise<void> {
    for (const c of [this.redis, this.subscriber])
      if (c) await c.quit().catch(() => c.disconnect());
  }

  async addUser(user: NewUser, now: number): Promise<UserRecord> {
    // Addresses compare by canonicalEmail, which the script cannot run: it gets the canonical
    // form and keeps an index of it (race-free between instances). Users added before the index
    // existed are found by this scan first.
    const holder = user.email === null ? null : await this.findByEmail(user.tenant, user.email);
    if (holder && holder.revokedAt === null && holder.name !== user.name)
      throw new EmailTakenError(user.email!, holder.name);
    const record: UserRecord = { ...user, createdAt: now, revokedAt: null };
    const answer = await this.script('usersAdd')(
      this.usersKey(user.tenant),
      this.devicesKey(user.tenant),
      this.addressesKey(user.tenant),
      user.name,
      JSON.stringify(record),
      this.channel,
      JSON.stringify({ tenant: user.tenant, user: user.name }),
      user.email === null ? '' : emailKey(user.email),
    );
    if (answer === 'exists') throw new UserExistsError(user.name);
    if (typeof answer === 'string' && answer.startsWith('email:'))
      throw new EmailTakenError(user.email!, answer.slice('email:'.length));
    return record;
  }

  async issueCode(tenant: string, name: string, hash: string, ttlMs: number, now: number) {
    const code = { tenant, user: name, createdAt: now, expiresAt: now + ttlMs };
    const answer = await this.script('usersIssue')(
      this.usersKey(tenant),
      this.codeKey(hash),
      name,
      JSON.stringify(code),
      String(ttlMs + 24 * 3600_000),
    );
    if (answer !== 'ok') throw new NoSuchUserError(name);
  }

  async redeem(
    tenant: string,
    codeHash: string,
    credentialHash: string,
    label: string,
    now: number,
  ): Promise<RedeemResult> {
    const device = { tenant, user: '', id: newDeviceId(), label, enrolledAt: now };
    const answer = (await this.script('usersRedeem')(
      this.codeKey(codeHash),
      this.usersKey(tenant),
      this.devicesKey(tenant),
      tenant,
      String(now),
      credentialHash,
      JSON.stringify(device),
      this.channel,
    )) as string[];
    if (answer[0] !== 'ok')
      return { ok: false, reason: answer[0] as 'unknown' | 'expired' | 'revoked' };
    return {
      ok: true,
      user: userFrom(answer[1]!),
      device: JSON.parse(answer[2]!) as DeviceRecord,
    };
  }

  async revoke(tenant: string, name: string, now: number): Promise<boolean> {
    const answer = await this.script('usersRevoke')(
      this.usersKey(tenant),
      this.devicesKey(tenant),
      name,
      String(now),
      this.channel,
      JSON.stringify({ tenant, user: name }),
    );
    return answer === 1;
  }

  async revokeAddress(tenant: string, email: string, now: number): Promise<string[]> {
    const want = emailKey(email);
    const record = UserState.revokedAddress(tenant, want, now);
    return (await this.script('usersRevokeAddress')(
      this.usersKey(tenant),
      this.devicesKey(tenant),
      want,
      String(now),
      this.channel,
      tenant,
      JSON.stringify(record),
    )) as string[];
  }

  async list(tenant?: string): Promise<{ user: UserRecord; devices: DeviceRecord[] }[]> {
    const tenants = tenant !== undefined ? [tenant] : await this.tenants();
    const out: { user: UserRecord; devices: DeviceRecord[] }[] = [];
    for (const t of tenants) {
      const users = await this.redis.hvals(this.usersKey(t));
      const devices = (await this.redis.hvals(this.devicesKey(t))).map(
        (d) => JSON.parse(d) as DeviceRecord,
      );
      for (const u of users.map(userFrom).sort((a, b) => a.name.localeCompare(b.name)))
        out.push({ user: u, devices: devices.filter((d) => d.user === u.name) });
    }
    return out;
  }

  async findUser(tenant: string, name: string): Promise<UserRecord | null> {
    const u = await this.redis.hget(this.usersKey(tenant), name);
    return u ? userFrom(u) : null;
  }

  /** The user with this address: an active one before a revoked one (added again since). */
  async findByEmail(tenant: string, email: string): Promise<UserRecord | null> {
    const want = canonicalEmail(email);
    if (want === null) return null;
    let revoked: UserRecord | null = null;
    for (const u of (await this.redis.hvals(this.usersKey(tenant))).map(userFrom))
      if (u.email !== null && canonicalEmail(u.email) === want) {
        if (u.revokedAt === null) return u;
        revoked ??= u;
      }
    return revoked;
  }

  async findDevice(
    tenant: string,
    credentialHash: string,
  ): Promise<{ user: UserRecord; device: DeviceRecord } | null> {
    const d = await this.redis.hget(this.devicesKey(tenant), credentialHash);
    if (!d) return null;
    const device = JSON.parse(d) as DeviceRecord;
    const user = await this.findUser(tenant, device.user);
    if (!user || user.revokedAt !== null) return null;
    return { user, device };
  }

  onChange(listener: (change: UserChange) => void): () => void {
    return this.changes.on(listener);
  }

  /**
   * Tenants that have users (for `relay users list` across tenants). SCAN has no key, so a
   * Cluster sends it to any one node: there, every primary is scanned (the `{users}` slot is on
   * one of them).
   */
  private async tenants(): Promise<string[]> {
    const found = new Set<string>();
    const pattern = `${this.prefix}{users}:*:users`;
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 200);
        cursor = next;
        for (const k of keys) found.add(k.slice(`${this.prefix}{users}:`.length, -':users'.length));
      } while (cursor !== '0');
    }
    return [...found].sort();
  }
}

function userFrom(text: string): UserRecord {
  const u = JSON.parse(text) as UserRecord;
  // cjson writes an empty list as {}: read it back as the empty list it was.
  const list = (x: unknown) => (Array.isArray(x) ? (x as string[]) : []);
  return {
    ...u,
    extensions: list(u.extensions),
    dids: list(u.dids),
    email: u.email ?? null,
  };
}
