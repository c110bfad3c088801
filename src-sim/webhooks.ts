import http from 'node:http';
import https from 'node:https';
import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import type { SimStats, WebhookInfo } from './types.ts';
import type { DispatchTarget } from './dispatcher.ts';
import { STANDARD_DIALECT, type SimDialect } from './phone-system.ts';

/**
 * Webhook delivery (docs/wire-protocol.md section 7): POST the envelope's exact bytes, signed, to each
 * configured URL; a non-2xx answer or no answer within 10 s is retried after 1 s, 2 s, 4 s, ...
 * (capped at 1 h between attempts) until 24 h after the event. All waiting runs on the sim clock.
 */
export const WEBHOOK_TIMEOUT_MS = 10_000;
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_GAP_MS = 3_600_000;
export const RETRY_WINDOW_MS = 86_400_000;

/** Delay before retry number `n` (1-based): 1 s, 2 s, 4 s, ... capped at 1 h. */
export function retryDelayMs(n: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(n - 1, 30), MAX_RETRY_GAP_MS);
}

interface Hook {
  id: string;
  /** A webhook is configured in one tenant's admin console and carries that tenant's events only. */
  tenant: string;
  url: URL;
  secret: string;
  events: Set<number> | null;
  deliveries: Set<Delivery>;
}

interface Delivery {
  hook: Hook;
  body: Buffer;
  /** The headers that sign the body (the phone system's scheme). */
  signature: Record<string, string>;
  startedAt: number;
  retries: number;
  timer: TimerHandle | undefined;
  request: http.ClientRequest | undefined;
}

const agentOptions = { keepAlive: true, maxSockets: 64 };

export class Webhooks implements DispatchTarget {
  private readonly hooks = new Map<string, Hook>();
  private readonly clock: Clock;
  private readonly stats: SimStats;
  private readonly defaultTenant: string;
  private readonly httpAgent = new http.Agent(agentOptions);
  private readonly httpsAgent = new https.Agent(agentOptions);
  private counter = 0;
  private closed = false;

  private readonly dialect: SimDialect;

  constructor(
    clock: Clock,
    stats: SimStats,
    defaultTenant: string,
    dialect: SimDialect = STANDARD_DIALECT,
  ) {
    this.clock = clock;
    this.stats = stats;
    this.defaultTenant = defaultTenant;
    this.dialect = dialect;
  }

  add(opts: { url: string; secret: string; events?: number[]; tenant?: string }): string {
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      throw new TypeError('webhook url is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError('webhook url must be http(s)');
    if (typeof opts.secret !== 'string' || opts.secret === '')
      throw new TypeError('webhook secret must be a non-empty string');
    if (
      opts.events !== undefined &&
      (!Array.isArray(opts.events) || !opts.events.every((e) => Number.isInteger(e)))
    )
      throw new TypeError('webhook events must be a list of event codes');
    if (opts.tenant !== undefined && (typeof opts.tenant !== 'string' || opts.tenant === ''))
      throw new TypeError('webhook tenant must be a non-empty string');
    const id = `wh_${++this.counter}`;
    this.hooks.set(id, {
      id,
      tenant: opts.tenant ?? this.defaultTenant,
      url,
      secret: opts.secret,
      events: opts.events ? new Set(opts.events) : null,
      deliveries: new Set(),
    });
    return id;
  }

  remove(id: string): void {
    const hook = this.hooks.get(id);
    if (!hook) throw new RangeError(`unknown webhook: ${id}`);
    for (const d of hook.deliveries) this.finish(d);
    this.hooks.delete(id);
  }

  list(): WebhookInfo[] {
    return [...this.hooks.values()].map((h) => ({
      id: h.id,
      tenant: h.tenant,
      url: h.url.href,
      events: h.events ? [...h.events] : null,
    }));
  }

  send(tenant: string, event: number | null, frame: Buffer): void {
    if (this.closed) return;
    for (const hook of this.hooks.values()) {
      if (hook.tenant !== tenant) continue;
      if (hook.events && event !== null && !hook.events.has(event)) continue;
      const delivery: Delivery = {
        hook,
        body: frame,
        signature: this.dialect.webhookHeaders(hook.secret, frame),
        startedAt: this.clock.monotonic(),
        retries: 0,
        timer: undefined,
        request: undefined,
      };
      hook.deliveries.add(delivery);
      this.stats.webhookPending++;
      this.attempt(delivery);
    }
  }

  close(): void {
    this.closed = true;
    for (const hook of this.hooks.values()) for (const d of hook.deliveries) this.finish(d);
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private attempt(d: Delivery): void {
    this.stats.webhookAttempts++;
    const { url } = d.hook;
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      this.clock.clearTimeout(d.timer);
      d.timer = undefined;
      d.request = undefined;
      if (!d.hook.deliveries.has(d)) return;
      if (ok) {
        this.stats.webhookDelivered++;
        this.finish(d);
      } else this.scheduleRetry(d);
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': String(d.body.length),
        ...d.signature,
        'User-Agent': 'screenpop-simulator/1.0',
      },
    });
    d.request = request;
    request.on('response', (res) => {
      res.resume();
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      // The answer counts once it is complete; a receiver that sends headers and then hangs is a time-out.
      res.on('end', () => settle(ok));
      res.on('error', () => settle(false));
    });
    request.on('error', () => settle(false));
    d.timer = this.clock.setTimeout(() => {
      request.destroy(new Error('webhook receiver did not answer within 10 s'));
      settle(false);
    }, WEBHOOK_TIMEOUT_MS);
    request.end(d.body);
  }

  private scheduleRetry(d: Delivery): void {
    this.stats.webhookFailedAttempts++;
    d.retries++;
    const wait = retryDelayMs(d.retries);
    if (this.clock.monotonic() + wait > d.startedAt + RETRY_WINDOW_MS) {
      this.stats.webhookGaveUp++;
      this.finish(d);
      return;
    }
    d.timer = this.clock.setTimeout(() => {
      d.timer = undefined;
      if (d.hook.deliveries.has(d)) this.attempt(d);
    }, wait);
  }

  private finish(d: Delivery): void {
    if (!d.hook.deliveries.delete(d)) return;
    this.stats.webhookPending--;
    this.clock.clearTimeout(d.timer);
    d.timer = undefined;
    d.request?.destroy();
    d.request = undefined;
  }
}
