import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../src-shared/process/clock.ts';
import type { Rng } from './rng.ts';
import type { SimApiKey, TokenRule } from './types.ts';
import { ApiError, ERR } from './errors.ts';

/** Lifetimes from docs/wire-protocol.md section 2, in (simulated) seconds. */
export const ACCESS_TOKEN_LIFETIME_S = 1800;
export const REFRESH_TOKEN_LIFETIME_S = 86400;

/** Scope names are our decision (docs/wire-protocol.md section 1). */
export const SCOPE_EXTENSION_READ = 'extension:read';
export const SCOPE_ALL_EVENTS = 'event:*';
/**
 * Yeastar P-Series' call API (call/dial, call/transfer, call/hangup, call/query; doc section 10):
 * a key without it is answered 10005 ACCESS DENIED, as a PBX whose API application lacks the
 * permission.
 */
export const SCOPE_CALL_CONTROL = 'call:control';
export const ALL_SCOPES = [SCOPE_EXTENSION_READ, SCOPE_ALL_EVENTS, SCOPE_CALL_CONTROL];

export interface KeyRecord {
  name: string;
  key: string;
  secret: string;
  scopes: Set<string>;
  allowlist: string[];
  allowed: BlockList | null;
  tenant: string;
  revoked: boolean;
}

export interface AccessRecord {
  token: string;
  key: KeyRecord;
  /** Wall-clock ms (sim clock) at which it stops working. */
  expiresAt: number;
}

interface RefreshRecord {
  token: string;
  key: KeyRecord;
  expiresAt: number;
}

export interface TokenPair {
  errcode: 0;
  errmsg: 'SUCCESS';
  access_token: string;
  access_token_expire_time: number;
  refresh_token: string;
  refresh_token_expire_time: number;
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
}

/** '::ffff:127.0.0.1' (IPv4 seen through a dual-stack socket) is 127.0.0.1. */
export function normalizeIp(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

function buildAllowlist(entries: string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const raw of entries) {
    const entry = String(raw).trim();
    const [addr = '', prefix] = entry.split('/');
    const type = isIPv4(addr) ? 'ipv4' : isIPv6(addr) ? 'ipv6' : null;
    if (!type) throw new RangeError(`not an IP address or CIDR range: ${entry}`);
    if (prefix === undefined) list.addAddress(addr, type);
    else {
      const bits = Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > (type === 'ipv4' ? 32 : 128))
        throw new RangeError(`bad CIDR prefix: ${entry}`);
      list.addSubnet(addr, bits, type);
    }
  }
  return list;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function publicKey(k: KeyRecord): SimApiKey {
  return {
    key: k.key,
    secret: k.secret,
    name: k.name,
    scopes: [...k.scopes],
    allowlist: [...k.allowlist],
  };
}

/**
 * API keys and the tokens issued for them. Expiry is judged on the sim clock's wall time.
 *
 * The token rule (docs/phone-systems/yeastar-p-series.md section 2) plays the two readings of a
 * P-Series with one API application on many computers:
 * - `limit`: *Get Access Token* ("Each third-party application is limited to 8 valid access
 *   tokens simultaneously"; a new one only once one expires or is revoked,
 *   https://help.yeastar.com/en/p-series-software-edition/developer-guide/get-access-token.html):
 *   a get_token or refresh_token that would make `max + 1` valid access tokens of the key is
 *   refused with ERR.TOKEN_LIMIT (Yeastar: 60002, our assumption: the guide names no code).
 * - `one-sign-in`: a public integration's notes, from live debugging against a real P-Series:
 *   "each new get_token call invalidates previously issued tokens for the same client". Each
 *   get_token ends every earlier access and refresh token of the key (refresh_token does not).
 * del_token (*Revoke Access Token*, `GET del_token?access_token=`) revokes one access token.
 */
export class Credentials {
  private readonly keys = new Map<string, KeyRecord>();
  private readonly access = new Map<string, AccessRecord>();
  private readonly refresh = new Map<string, RefreshRecord>();
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly defaultTenant: string;
  private readonly accessLifetimeS: number;
  private readonly tokenRule: TokenRule;
  private keyCount = 0;
  /**
   * The most access tokens of one API application valid at once, so far (GET /_sim/stats), under
   * a token rule (`--token-limit`, `--token-one-sign-in`).
   */
  peakValid = 0;
  private ended: () => void = () => {};

  constructor(
    clock: Clock,
    rng: Rng,
    defaultTenant: string,
    accessLifetimeS = ACCESS_TOKEN_LIFETIME_S,
    tokenRule: TokenRule = { kind: 'none' },
  ) {
    this.clock = clock;
    this.rng = rng;
    this.defaultTenant = defaultTenant;
    this.accessLifetimeS = accessLifetimeS;
    this.tokenRule = tokenRule;
  }

  createKey(
    opts: { name?: string; scopes?: string[]; allowlist?: string[]; tenant?: string } = {},
  ): KeyRecord {
    this.keyCount++;
    const allowlist = [...(opts.allowlist ?? [])];
    const record: KeyRecord = {
      name: opts.name ?? (this.keyCount === 1 ? 'Screenpop' : `Screenpop ${this.keyCount}`),
      // Key and secret come from the seed so that a CLI run with the same --seed prints the same ones.
      key: `sk_${this.rng.hex(24)}`,
      secret: `ss_${this.rng.hex(40)}`,
      scopes: new Set(opts.scopes ?? ALL_SCOPES),
      allowlist,
      allowed: buildAllowlist(allowlist),
      tenant: opts.tenant ?? this.defaultTenant,
      revoked: false,
    };
    this.keys.set(record.key, record);
    return record;
  }

  listKeys(): KeyRecord[] {
    return [...this.keys.values()];
  }

  requireKey(key: string): KeyRecord {
    const record = this.keys.get(key);
    if (!record) throw new RangeError('unknown API key');
    return record;
  }

  revoke(key: string): void {
    this.requireKey(key).revoked = true;
  }

  setAllowlist(key: string, ips: string[]): void {
    const record = this.requireKey(key);
    record.allowed = buildAllowlist(ips);
    record.allowlist = [...ips];
  }

  /** Every access token issued so far stops working now; refresh tokens stay valid. */
  expireAll(): void {
    const now = this.clock.now();
    for (const rec of this.access.values()) if (rec.expiresAt > now) rec.expiresAt = now;
  }

  /** A restart: every access and refresh token issued so far is unknown from now on. */
  forgetAll(): void {
    this.access.clear();
    this.refresh.clear();
  }

  isExpired(rec: AccessRecord): boolean {
    return this.clock.now() >= rec.expiresAt;
  }

  checkIp(key: KeyRecord, ip: string): void {
    if (!key.allowed) return;
    const type = isIPv4(ip) ? 'ipv4' : 'ipv6';
    if (!ip || !key.allowed.check(ip, type)) throw new ApiError(ERR.IP_NOT_ALLOWED);
  }

  hasScope(key: KeyRecord, scope: string): boolean {
    if (key.scopes.has(scope)) return true;
    return scope.startsWith('event:') && key.scopes.has(SCOPE_ALL_EVENTS);
  }

  /** POST get_token. */
  exchange(username: unknown, password: unknown, ip: string): TokenPair {
    if (typeof username !== 'string' || typeof password !== 'string')
      throw new ApiError(ERR.BAD_REQUEST, 'username and password (strings) are required');
    const key = this.keys.get(username);
    if (!key || key.revoked || !sameSecret(key.secret, password))
      throw new ApiError(ERR.INVALID_KEY);
    this.checkIp(key, ip);
    if (this.tokenRule.kind === 'one-sign-in') this.endTokensOf(key);
    this.checkLimit(key);
    return this.issue(key);
  }

  /** GET del_token: the access token stops working now (unknown or expired: 10002, as for any call). */
  revokeAccess(token: string | undefined, ip: string): void {
    const rec = this.authenticate(token, ip);
    rec.expiresAt = this.clock.now();
    this.ended();
  }

  /**
   * Called when tokens stop working before their time (del_token, a sign-in under the
   * one-sign-in rule): the socket hub closes the sockets opened with them. Assumption (docs
   * section 2): such a socket is closed as an expired one (10004, then 4002).
   */
  onTokensEnded(listener: () => void): void {
    this.ended = listener;
  }

  /** How many access tokens work now, of every key. */
  validAccessTotal(): number {
    const now = this.clock.now();
    let n = 0;
    for (const rec of this.access.values()) if (now < rec.expiresAt) n++;
    return n;
  }

  /** How many access tokens of `key` work now (the token rule counts them). */
  validAccessCount(key: KeyRecord): number {
    const now = this.clock.now();
    let n = 0;
    for (const rec of this.access.values()) if (rec.key === key && now < rec.expiresAt) n++;
    return n;
  }

  private checkLimit(key: KeyRecord): void {
    if (this.tokenRule.kind === 'limit' && this.validAccessCount(key) >= this.tokenRule.max)
      throw new ApiError(ERR.TOKEN_LIMIT);
  }

  private endTokensOf(key: KeyRecord): void {
    const now = this.clock.now();
    for (const rec of this.access.values())
      if (rec.key === key && rec.expiresAt > now) rec.expiresAt = now;
    for (const [t, rec] of this.refresh) if (rec.key === key) this.refresh.delete(t);
    this.ended();
  }

  /** POST refresh_token: a new pair; the used refresh token is spent, the old access token lives on. */
  refreshPair(token: unknown, ip: string): TokenPair {
    if (typeof token !== 'string' || token === '')
      throw new ApiError(ERR.BAD_REQUEST, 'refresh_token (string) is required');
    const rec = this.refresh.get(token);
    if (!rec || this.clock.now() >= rec.expiresAt) {
      if (rec) this.refresh.delete(token);
      throw new ApiError(ERR.TOKEN_EXPIRED);
    }
    if (rec.key.revoked) throw new ApiError(ERR.INVALID_KEY);
    this.checkIp(rec.key, ip);
    this.checkLimit(rec.key);
    this.refresh.delete(token);
    return this.issue(rec.key);
  }

  /** A bearer token, checked in this order: unknown 10002, key revoked 10001, IP 10004, expired 10002. */
  authenticate(token: string | undefined, ip: string): AccessRecord {
    const rec = token ? this.access.get(token) : undefined;
    if (!rec) throw new ApiError(ERR.TOKEN_EXPIRED);
    if (rec.key.revoked) throw new ApiError(ERR.INVALID_KEY);
    this.checkIp(rec.key, ip);
    if (this.isExpired(rec)) throw new ApiError(ERR.TOKEN_EXPIRED);
    return rec;
  }

  private issue(key: KeyRecord): TokenPair {
    const now = this.clock.now();
    this.prune(now);
    const accessToken = `at_${randomBytes(24).toString('base64url')}`;
    const refreshToken = `rt_${randomBytes(24).toString('base64url')}`;
    this.access.set(accessToken, {
      token: accessToken,
      key,
      expiresAt: now + this.accessLifetimeS * 1000,
    });
    // Counted under a token rule only: a count per issue would slow a load test's thousands.
    if (this.tokenRule.kind !== 'none')
      this.peakValid = Math.max(this.peakValid, this.validAccessCount(key));
    this.refresh.set(refreshToken, {
      token: refreshToken,
      key,
      expiresAt: now + REFRESH_TOKEN_LIFETIME_S * 1000,
    });
    return {
      errcode: 0,
      errmsg: 'SUCCESS',
      access_token: accessToken,
      access_token_expire_time: this.accessLifetimeS,
      refresh_token: refreshToken,
      refresh_token_expire_time: REFRESH_TOKEN_LIFETIME_S,
    };
  }

  /** Keeps memory flat under load tests: long-expired tokens answer 10002 just as well when unknown. */
  private prune(now: number): void {
    if (this.access.size + this.refresh.size < 20_000) return;
    for (const [t, r] of this.access) if (now >= r.expiresAt) this.access.delete(t);
    for (const [t, r] of this.refresh) if (now >= r.expiresAt) this.refresh.delete(t);
  }
}
