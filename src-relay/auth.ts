import { createHash } from 'node:crypto';
import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import type { Logger } from '../src-shared/process/log.ts';
import { ERRCODE } from '../src-shared/api/errcodes.ts';
import { wireFor } from '../src-shared/wire/index.ts';
import { placeToken } from '../src-shared/wire/phone-system.ts';
import type { PhoneSystem } from '../src-shared/phone-systems/names.ts';
import { RefusalBudget } from './refusal-budget.ts';
import { API_PATHS, serviceUrl } from '../src-shared/api/service-api.ts';

/**
 * Client authentication (docs/relay-protocol.md, "Authentication"): a desktop presents the access
 * token it already holds for the service; the relay asks the tenant's service whether that token
 * works (GET extension/list, one entry) and caches the answer. The relay never stores tokens, only
 * their SHA-256, and never sends them anywhere but the tenant's own base URL.
 *
 * The service is asked at most `maxInFlight` times at once. More checks wait in a queue served
 * fairly by client address (round robin), so a relay restart, when every desktop reconnects at
 * once with a token of its own, is a short wait and not a storm of refusals. An address whose
 * tokens keep being refused (made-up tokens) spends a budget of refusals per minute; past it, its
 * unknown tokens are refused with 429 without asking the service.
 */
export type AuthVerdict =
  | { ok: true }
  | { ok: false; status: 401 | 403; errcode: number; reason: string }
  | { ok: false; status: 429; errcode: typeof ERRCODE.rateLimited; reason: string }
  | { ok: false; status: 503; errcode: 0; reason: string };

export interface TokenValidatorOptions {
  fetch: typeof fetch;
  clock: Clock;
  logger: Logger;
  /** How long a positive answer is trusted (ms). */
  positiveTtlMs?: number;
  /** How long a negative answer is remembered, so a bad token cannot hammer the service (ms). */
  negativeTtlMs?: number;
  /** Time-out of one validation call (ms). */
  timeoutMs?: number;
  maxEntries?: number;
  /** Checks of distinct tokens waiting on the service at once. */
  maxInFlight?: number;
  /** Checks that may wait for a turn; beyond it, and after `queueTimeoutMs` of waiting: 503. */
  maxQueued?: number;
  queueTimeoutMs?: number;
  /** Refusals (401/403 from the service) per client address per minute before its unknown tokens get 429. */
  maxFailuresPerAddressPerMinute?: number;
}

interface Entry {
  verdict: AuthVerdict;
  until: number;
}

interface Waiter {
  address: string;
  start: () => void;
  timer: TimerHandle;
}

/** SHA-256 of a token, hex: the only form in which the relay keeps or compares tokens. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class TokenValidator {
  private readonly options: Required<Omit<TokenValidatorOptions, 'fetch' | 'clock' | 'logger'>>;
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<AuthVerdict>>();
  private readonly deps: Pick<TokenValidatorOptions, 'fetch' | 'clock' | 'logger'>;
  private asking = 0;
  /** Waiting checks by client address; `turns` is the round-robin order of addresses waiting. */
  private readonly waiting = new Map<string, Waiter[]>();
  private turns: string[] = [];
  private queued = 0;
  private readonly refusals: RefusalBudget;

  constructor(options: TokenValidatorOptions) {
    this.deps = options;
    this.options = {
      positiveTtlMs: options.positiveTtlMs ?? 5 * 60_000,
      negativeTtlMs: options.negativeTtlMs ?? 10_000,
      timeoutMs: options.timeoutMs ?? 5_000,
      maxEntries: options.maxEntries ?? 50_000,
      maxInFlight: options.maxInFlight ?? 100,
      maxQueued: options.maxQueued ?? 10_000,
      queueTimeoutMs: options.queueTimeoutMs ?? 10_000,
      maxFailuresPerAddressPerMinute: options.maxFailuresPerAddressPerMinute ?? 20,
    };
    this.refusals = new RefusalBudget(this.options.maxFailuresPerAddressPerMinute, () =>
      options.clock.monotonic(),
    );
  }

  /** Answers held now (expired ones included until they are asked again or dropped). */
  get cachedAnswers(): number {
    return this.cache.size;
  }

  /** Checks waiting for a turn at the service now. */
  get queueLength(): number {
    return this.queued;
  }

  async validate(
    tenant: string,
    baseUrl: string,
    token: string,
    address = 'unknown',
    hash = tokenKey(token),
    phoneSystem: PhoneSystem = 'standard',
  ): Promise<AuthVerdict> {
    const key = tenant + ':' + hash;
    const hit = this.cache.get(key);
    if (hit && hit.until > this.deps.clock.monotonic()) return hit.verdict;
    const joined = this.pending.get(key);
    if (joined) return joined;
    if (!this.refusals.allows(address)) return RATE_LIMITED;
    const p = this.whenTurn(address).then(async (turn) => {
      if (turn !== 'go') return turn;
      try {
        // The budget may have run out while this check waited.
        if (!this.refusals.allows(address)) return RATE_LIMITED;
        const verdict = await this.ask(baseUrl, token, phoneSystem);
        this.remember(key, verdict);
        if (!verdict.ok && (verdict.status === 401 || verdict.status === 403))
          this.refusals.spend(address);
        return verdict;
      } finally {
        this.asking -= 1;
        this.next();
      }
    });
    this.pending.set(key, p);
    void p.finally(() => this.pending.delete(key));
    return p;
  }

  /** Resolves 'go' (a turn at the service is taken) or the verdict that ends the wait. */
  private whenTurn(address: string): Promise<'go' | AuthVerdict> {
    if (this.asking < this.options.maxInFlight && this.queued === 0) {
      this.asking += 1;
      return Promise.resolve('go');
    }
    if (this.queued >= this.options.maxQueued) return Promise.resolve(BUSY);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        address,
        start: () => resolve('go'),
        timer: this.deps.clock.setTimeout(() => {
          if (this.dequeue(waiter)) resolve(BUSY);
        }, this.options.queueTimeoutMs),
      };
      let list = this.waiting.get(address);
      if (!list) {
        this.waiting.set(address, (list = []));
        this.turns.push(address);
      }
      list.push(waiter);
      this.queued += 1;
    });
  }

  /** Gives free turns to waiting checks, one address after another. */
  private next(): void {
    while (this.asking < this.options.maxInFlight && this.turns.length > 0) {
      const address = this.turns.shift()!;
      const list = this.waiting.get(address)!;
      const waiter = list.shift()!;
      if (list.length > 0) this.turns.push(address);
      else this.waiting.delete(address);
      this.queued -= 1;
      this.deps.clock.clearTimeout(waiter.timer);
      this.asking += 1;
      waiter.start();
    }
  }

  private dequeue(waiter: Waiter): boolean {
    const list = this.waiting.get(waiter.address);
    const i = list?.indexOf(waiter) ?? -1;
    if (!list || i < 0) return false;
    list.splice(i, 1);
    this.queued -= 1;
    if (list.length === 0) {
      this.waiting.delete(waiter.address);
      this.turns = this.turns.filter((a) => a !== waiter.address);
    }
    return true;
  }

  /**
   * Keeps the service's answer: a working token for `positiveTtlMs`, a refusal (401/403) for
   * `negativeTtlMs` (so a made-up token cannot hammer the service, yet a user who fixed an
   * allowlist waits seconds, not minutes); an outage not at all. A newer answer replaces an older
   * one for the same token (a 401 after a positive answer expired revokes it), and counts as the
   * newest for the bound: past `maxEntries` the oldest answer is dropped. Lifetimes run on the
   * monotonic clock: a wall clock set back cannot stretch them.
   */
  private remember(key: string, verdict: AuthVerdict): void {
    // A service outage (503) is not remembered: the next client tries again.
    if (!verdict.ok && (verdict.status === 503 || verdict.status === 429)) return;
    this.cache.delete(key);
    if (this.cache.size >= this.options.maxEntries)
      this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, {
      verdict,
      until:
        this.deps.clock.monotonic() +
        (verdict.ok ? this.options.positiveTtlMs : this.options.negativeTtlMs),
    });
  }

  private async ask(
    baseUrl: string,
    token: string,
    phoneSystem: PhoneSystem,
  ): Promise<AuthVerdict> {
    // The token where the phone system's dialect puts it (src-shared/wire: the Authorization
    // header, or Yeastar P-Series' query), with the User-Agent Yeastar requires
    // (docs/phone-systems/yeastar-p-series.md section 1); the token is registered nowhere here and
    // the URL is never logged.
    const { api } = wireFor(phoneSystem);
    // The API lives under the tenant's base address, path included (`https://pbx.example/t/acme`).
    const url = serviceUrl(baseUrl, API_PATHS.extensionList);
    url.search = '?page=1&page_size=1';
    const headers: Record<string, string> = { 'User-Agent': 'Screenpop-relay' };
    placeToken(api, url, headers, token);
    let res: Response;
    try {
      res = await this.deps.fetch(url, {
        headers,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      this.deps.logger.warn('token validation unreachable', { error: err });
      return {
        ok: false,
        status: 503,
        errcode: 0,
        reason: 'service unreachable; cannot validate the token',
      };
    }
    let errcode: number | undefined;
    try {
      const body = (await res.json()) as { errcode?: unknown };
      if (typeof body.errcode === 'number')
        errcode = api.asStandard(body.errcode, { operation: 'extension/list' });
    } catch {
      // not JSON: decide on the status alone (docs/wire-protocol.md section 4)
    }
    if (errcode === ERRCODE.ok && res.ok) return { ok: true };
    const { invalidCredentials, tokenExpired, insufficientScope, ipNotAllowed } = ERRCODE;
    if (
      errcode === invalidCredentials ||
      errcode === tokenExpired ||
      (errcode === undefined && res.status === 401)
    )
      return {
        ok: false,
        status: 401,
        errcode: errcode ?? tokenExpired,
        reason: 'token rejected by the service',
      };
    if (
      errcode === insufficientScope ||
      errcode === ipNotAllowed ||
      (errcode === undefined && res.status === 403)
    )
      return {
        ok: false,
        status: 403,
        errcode: errcode ?? insufficientScope,
        reason: 'token not allowed to read extensions',
      };
    return { ok: false, status: 503, errcode: 0, reason: `service answered ${res.status}` };
  }
}

const RATE_LIMITED: AuthVerdict = {
  ok: false,
  status: 429,
  errcode: ERRCODE.rateLimited,
  reason: 'too many refused tokens from this address; retry later',
};

const BUSY: AuthVerdict = {
  ok: false,
  status: 503,
  errcode: 0,
  reason: 'too many token checks waiting; retry later',
};
