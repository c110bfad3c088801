import { createHash } from 'node:crypto';
import type { Clock } from '../src-main/core/clock.ts';
import type { Logger } from '../src-main/core/log.ts';

/**
 * Client authentication (docs/relay-protocol.md, "Authentication"): a desktop presents the access
 * token it already holds for the service; the relay asks the tenant's service whether that token
 * works (GET extension/list, one entry) and caches the answer. The relay never stores tokens, only
 * their SHA-256, and never sends them anywhere but the tenant's own base URL.
 */
export type AuthVerdict =
  | { ok: true }
  | { ok: false; status: 401 | 403; errcode: number; reason: string }
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
  /**
   * Checks of distinct tokens waiting on the service at once. Every unknown token costs one call,
   * so handshakes with made-up tokens would otherwise turn into as many calls at the service;
   * beyond this the handshake is refused with 503 and the client backs off.
   */
  maxInFlight?: number;
}

interface Entry {
  verdict: AuthVerdict;
  until: number;
}

export class TokenValidator {
  private readonly options: Required<Omit<TokenValidatorOptions, 'fetch' | 'clock' | 'logger'>>;
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<AuthVerdict>>();
  private readonly deps: Pick<TokenValidatorOptions, 'fetch' | 'clock' | 'logger'>;

  constructor(options: TokenValidatorOptions) {
    this.deps = options;
    this.options = {
      positiveTtlMs: options.positiveTtlMs ?? 5 * 60_000,
      negativeTtlMs: options.negativeTtlMs ?? 10_000,
      timeoutMs: options.timeoutMs ?? 5_000,
      maxEntries: options.maxEntries ?? 50_000,
      maxInFlight: options.maxInFlight ?? 100,
    };
  }

  async validate(tenant: string, baseUrl: string, token: string): Promise<AuthVerdict> {
    const key = tenant + ':' + createHash('sha256').update(token).digest('hex');
    const now = this.deps.clock.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.verdict;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    if (this.inFlight.size >= this.options.maxInFlight)
      return { ok: false, status: 503, errcode: 0, reason: 'too many token checks; retry later' };
    const p = this.ask(baseUrl, token).then((verdict) => {
      this.inFlight.delete(key);
      // A service outage (503) is not remembered: the next client tries again.
      if (verdict.ok || verdict.status !== 503) {
        if (this.cache.size >= this.options.maxEntries)
          this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(key, {
          verdict,
          until:
            this.deps.clock.now() +
            (verdict.ok ? this.options.positiveTtlMs : this.options.negativeTtlMs),
        });
      }
      return verdict;
    });
    this.inFlight.set(key, p);
    return p;
  }

  private async ask(baseUrl: string, token: string): Promise<AuthVerdict> {
    // The API lives under the tenant's base address, path included (`https://pbx.example/t/acme`).
    const url = new URL(baseUrl);
    url.pathname = url.pathname.replace(/\/+$/, '') + '/openapi/v1.0/extension/list';
    url.search = '?page=1&page_size=1';
    url.hash = '';
    let res: Response;
    try {
      res = await this.deps.fetch(url, {
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      this.deps.logger.warn('token validation unreachable', { err: (err as Error).name });
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
      if (typeof body.errcode === 'number') errcode = body.errcode;
    } catch {
      // not JSON: decide on the status alone (protocol.md section 5)
    }
    if (errcode === 0 && res.ok) return { ok: true };
    if (errcode === 10001 || errcode === 10002 || (errcode === undefined && res.status === 401))
      return {
        ok: false,
        status: 401,
        errcode: errcode ?? 10002,
        reason: 'token rejected by the service',
      };
    if (errcode === 10003 || errcode === 10004 || (errcode === undefined && res.status === 403))
      return {
        ok: false,
        status: 403,
        errcode: errcode ?? 10003,
        reason: 'token not allowed to read extensions',
      };
    return { ok: false, status: 503, errcode: 0, reason: `service answered ${res.status}` };
  }
}
