/**
 * The CRM lookup service: one connector (connector.ts) behind the rules every connector shares.
 *
 * - Never delays a pop: callers start a lookup after the card is shown and fill it in when the
 *   answer comes; `lookup()` never rejects.
 * - A time-out (`timeoutMs`, 3 s by default) from the moment of asking, queue time included: a
 *   name that arrives after the phone stopped ringing helps far less, and a CRM that hangs must not
 *   pile up requests. Abandoned requests are aborted, not left running.
 * - A cache of answers (15 min) and a negative cache of "no one by that number" (5 min), bounded
 *   (1,000 numbers, least recently used out first), and one request at a time per number
 *   (concurrent asks share it): a busy line or a caller who rings back does not hammer the CRM.
 * - At most 2 requests at once; up to 20 wait their turn; beyond that a lookup is skipped ('busy').
 * - A 429 pauses every lookup for as long as the CRM asked (Retry-After, or the connector's rule),
 *   at most an hour; 3 failures in a row (time-outs, network, 5xx) pause it 30 s, doubling up to
 *   5 min, so a CRM that is down is asked again now and then, not once per call. Credentials that
 *   are refused are not asked with again until the settings change.
 * - Answers are untrusted: name and company become inert display text (no controls or bidi
 *   overrides, at most 128 characters); a record link is kept only if the one URL gate
 *   (app/external-url.ts) passes it.
 * - Diagnostics (`stats()`): counts, latency percentiles and the kinds of failures; never a
 *   number, a name or the token.
 */
import { regionOf, telephoneForms } from '../numbers/phone-number.ts';
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { vetExternalUrl } from '../links/external-url.ts';
import { displayText } from '../../../src-shared/ui/text.ts';
import {
  CrmError,
  type CrmAnswer,
  type CrmConnector,
  type CrmCertificateProblem,
  type CrmFailureKind,
  type CrmQuery,
} from './connector.ts';
import { TIMED_OUT } from './http.ts';

export const CRM_TIMEOUT_MS = 3_000;
const CACHE_TTL_MS = 15 * 60_000;
const NEGATIVE_TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 1_000;
const MAX_CONCURRENT = 2;
const MAX_QUEUED = 20;
const MAX_PAUSE_MS = 60 * 60_000;
const FAILURES_BEFORE_PAUSE = 3;
const FAILURE_PAUSE_MS = 30_000;
const MAX_FAILURE_PAUSE_MS = 5 * 60_000;
const MAX_TEXT = 128;
const LATENCY_SAMPLES = 500;

/** Why a lookup did not ask the CRM at all. */
export type CrmSkip =
  /** Not a telephone number (an extension, text): nothing a CRM would know. */
  | 'not-a-number'
  /** Paused after a 429 or failures in a row. */
  | 'paused'
  /** Too many lookups waiting. */
  | 'busy'
  /** The credentials were refused; asking again needs new ones. */
  | 'refused';

export type CrmResult =
  | {
      status: 'found';
      name: string;
      company: string | null;
      /** Vetted by the URL gate; null when the CRM gave none or the gate refused it. */
      recordUrl: string | null;
      /** The CRM's id of the contact (HubSpot's), for the call log; absent when it gave none. */
      contactId?: string;
      cached: boolean;
    }
  | { status: 'not-found'; cached: boolean }
  | { status: 'failed'; kind: CrmFailureKind; certificate?: CrmCertificateProblem }
  | { status: 'skipped'; reason: CrmSkip };

export interface CrmStats {
  provider: string;
  lookups: number;
  found: number;
  notFound: number;
  cacheHits: number;
  skipped: Record<string, number>;
  failures: Record<string, number>;
  /** Milliseconds of the CRM's answers (not the cache's): the last 500. */
  latencyMs: { count: number; p50: number | null; p99: number | null; max: number | null };
  lastFailure: { kind: CrmFailureKind; at: number } | null;
  pausedUntil: number | null;
}

export interface CrmLookupOptions {
  clock: Clock;
  logger: Logger;
  connector: CrmConnector;
  /** The default region for numbers without a country code ("US"). */
  region: () => string;
  /** Schemes the record link may use besides https (the CRM link's allowed schemes). */
  allowedSchemes: () => readonly string[];
  timeoutMs?: number;
}

interface CacheEntry {
  result: Extract<CrmResult, { status: 'found' | 'not-found' }>;
  expiresAt: number;
}

/**
 * The forms of a number a CRM may store it in; null for a short number (an extension or a short
 * code: nothing a CRM would know) and for what is not a telephone number. The project's one
 * reading of a number (phone-number.ts): the same region rule, "possible" test and short-number rule.
 */
export function crmQuery(raw: string, region: string): CrmQuery | null {
  const text = raw.trim().slice(0, 64);
  const forms = telephoneForms(text, region);
  return forms && { ...forms, raw: text, region: regionOf(region) ?? '' };
}

export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? null;
}

export class CrmLookup {
  private readonly o: CrmLookupOptions;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CrmResult>>();
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private pausedUntil = 0;
  private failuresInRow = 0;
  private failurePauseMs = FAILURE_PAUSE_MS;
  private refused = false;
  private closed = false;
  private readonly controllers = new Set<AbortController>();
  private readonly latencies: number[] = [];
  private readonly counts = {
    lookups: 0,
    found: 0,
    notFound: 0,
    cacheHits: 0,
    skipped: {} as Record<string, number>,
    failures: {} as Record<string, number>,
  };
  private lastFailure: { kind: CrmFailureKind; at: number } | null = null;

  constructor(options: CrmLookupOptions) {
    this.o = options;
    this.logger = options.logger.child({ component: 'crm', provider: options.connector.kind });
    this.timeoutMs = options.timeoutMs ?? CRM_TIMEOUT_MS;
  }

  get provider(): string {
    return this.o.connector.kind;
  }

  /** Who this number is in the CRM. Never rejects; see CrmResult. */
  lookup(number: string): Promise<CrmResult> {
    const query = crmQuery(number, this.o.region());
    if (!query) return Promise.resolve(this.skip('not-a-number'));
    const key = query.e164;
    const now = this.o.clock.now();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) {
      // Least recently used goes first: a hit moves to the end.
      this.cache.delete(key);
      this.cache.set(key, cached);
      this.counts.cacheHits++;
      return Promise.resolve({ ...cached.result, cached: true });
    }
    if (cached) this.cache.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    if (this.closed) return Promise.resolve(this.skip('paused'));
    if (this.refused) return Promise.resolve(this.skip('refused'));
    if (now < this.pausedUntil) return Promise.resolve(this.skip('paused'));
    if (this.running >= MAX_CONCURRENT && this.waiting.length >= MAX_QUEUED)
      return Promise.resolve(this.skip('busy'));
    const asking = this.ask(query).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, asking);
    return asking;
  }

  /** Forgets answers and pauses (the settings changed: another CRM, other credentials). */
  reset(): void {
    this.cache.clear();
    this.pausedUntil = 0;
    this.failuresInRow = 0;
    this.failurePauseMs = FAILURE_PAUSE_MS;
    this.refused = false;
  }

  /** Aborts what is running; later lookups are skipped. */
  close(): void {
    this.closed = true;
    for (const c of this.controllers) c.abort(TIMED_OUT);
    for (const wake of this.waiting.splice(0)) wake();
  }

  stats(): CrmStats {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      provider: this.o.connector.kind,
      lookups: this.counts.lookups,
      found: this.counts.found,
      notFound: this.counts.notFound,
      cacheHits: this.counts.cacheHits,
      skipped: { ...this.counts.skipped },
      failures: { ...this.counts.failures },
      latencyMs: {
        count: sorted.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? null,
      },
      lastFailure: this.lastFailure,
      pausedUntil: this.pausedUntil > this.o.clock.now() ? this.pausedUntil : null,
    };
  }

  private skip(reason: CrmSkip): CrmResult {
    this.counts.skipped[reason] = (this.counts.skipped[reason] ?? 0) + 1;
    return { status: 'skipped', reason };
  }

  private async ask(query: CrmQuery): Promise<CrmResult> {
    const started = this.o.clock.now();
    const controller = new AbortController();
    this.controllers.add(controller);
    let timer: TimerHandle | undefined = this.o.clock.setTimeout(() => {
      timer = undefined;
      controller.abort(TIMED_OUT);
    }, this.timeoutMs);
    try {
      const slot = await this.turn(controller.signal, started + this.timeoutMs);
      if (!slot) throw new CrmError('timeout', 'timed out while waiting for a turn');
      this.counts.lookups++;
      let answer: CrmAnswer;
      try {
        answer = await this.withAbort(
          this.o.connector.lookup(query, controller.signal),
          controller.signal,
        );
      } finally {
        this.release();
      }
      this.latencies.push(this.o.clock.now() - started);
      if (this.latencies.length > LATENCY_SAMPLES) this.latencies.shift();
      this.failuresInRow = 0;
      this.failurePauseMs = FAILURE_PAUSE_MS;
      const result = this.inert(answer);
      if (result.status === 'found') this.counts.found++;
      else this.counts.notFound++;
      this.remember(query.e164, result);
      return result;
    } catch (error) {
      return this.failed(error, controller.signal);
    } finally {
      this.o.clock.clearTimeout(timer);
      this.controllers.delete(controller);
    }
  }

  /**
   * Waits for a free slot: true once it has one (release() it), false when aborted or out of time
   * first (a slot freed at the deadline goes to the next in line, not to a request about to end).
   */
  private turn(signal: AbortSignal, deadline: number): Promise<boolean> {
    if (this.closed || signal.aborted) return Promise.resolve(false);
    if (this.running < MAX_CONCURRENT) {
      this.running++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const go = () => {
        signal.removeEventListener('abort', give);
        if (this.closed) return resolve(false);
        if (signal.aborted || this.o.clock.now() >= deadline) {
          resolve(false);
          this.waiting.shift()?.();
          return;
        }
        this.running++;
        resolve(true);
      };
      const give = () => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      };
      this.waiting.push(go);
      signal.addEventListener('abort', give, { once: true });
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  /** The connector's promise, or the abort (a connector that ignores its signal still ends). */
  private withAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(new CrmError('timeout', 'the CRM did not answer in time'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private inert(answer: CrmAnswer): Extract<CrmResult, { status: 'found' | 'not-found' }> {
    if (!answer.found) return { status: 'not-found', cached: false };
    const name = displayText(answer.record.name, MAX_TEXT);
    if (!name) return { status: 'not-found', cached: false };
    const company = displayText(answer.record.company, MAX_TEXT) || null;
    let recordUrl: string | null = null;
    if (answer.record.recordUrl) {
      const vetted = vetExternalUrl(answer.record.recordUrl.trim(), this.o.allowedSchemes());
      if (vetted.ok) recordUrl = vetted.url;
      else this.logger.warn('CRM record link refused', { reason: vetted.message });
    }
    const id = answer.record.contactId;
    const contactId = typeof id === 'string' && /^\d{1,20}$/.test(id) ? id : undefined;
    return {
      status: 'found',
      name,
      company,
      recordUrl,
      ...(contactId && { contactId }),
      cached: false,
    };
  }

  private remember(key: string, result: CacheEntry['result']): void {
    const ttl = result.status === 'found' ? CACHE_TTL_MS : NEGATIVE_TTL_MS;
    this.cache.delete(key);
    this.cache.set(key, { result, expiresAt: this.o.clock.now() + ttl });
    while (this.cache.size > MAX_ENTRIES) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  private failed(error: unknown, signal: AbortSignal): CrmResult {
    const kind: CrmFailureKind =
      error instanceof CrmError ? error.kind : signal.aborted ? 'timeout' : 'bad-answer';
    const now = this.o.clock.now();
    this.counts.failures[kind] = (this.counts.failures[kind] ?? 0) + 1;
    this.lastFailure = { kind, at: now };
    if (kind === 'rate-limited') {
      const wait = error instanceof CrmError ? (error.retryAfterMs ?? 1_000) : 1_000;
      this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(MAX_PAUSE_MS, wait));
    } else if (kind === 'auth' || kind === 'forbidden' || kind === 'no-credentials') {
      this.refused = true;
    } else if (++this.failuresInRow >= FAILURES_BEFORE_PAUSE) {
      this.pausedUntil = Math.max(this.pausedUntil, now + this.failurePauseMs);
      this.failurePauseMs = Math.min(MAX_FAILURE_PAUSE_MS, this.failurePauseMs * 2);
      this.failuresInRow = 0;
    }
    // The kind and the status only: the error's text may quote the CRM's body.
    this.logger.warn('CRM lookup failed', {
      kind,
      ...(error instanceof CrmError && error.status !== undefined ? { status: error.status } : {}),
    });
    return error instanceof CrmError && error.certificate
      ? { status: 'failed', kind, certificate: error.certificate }
      : { status: 'failed', kind };
  }
}
