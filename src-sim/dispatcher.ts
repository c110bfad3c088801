import type { Clock } from '../src-shared/process/clock.ts';
import type { Envelope, SimStats } from './types.ts';

/**
 * Builds event envelopes and sends them: serialized once (key order event, timestamp, tenant,
 * data, event_id), the same bytes to every subscribed socket and as every webhook body. The
 * duplicate and reorder faults act here, so both channels see them.
 */
export interface DispatchTarget {
  /** `payload` is the UTF-8 frame text. `event` null: a raw frame for every subscriber (emitRaw). */
  send(tenant: string, event: number | null, payload: Buffer): void;
}

export interface DispatcherOptions {
  clock: Clock;
  tenant: string;
  timestampUnit: 'ms' | 's';
  instanceId: string;
  stats: SimStats;
  targets: DispatchTarget[];
  /** The frame text of an envelope (the phone system's framing); the envelope's JSON by default. */
  encode?: (envelope: Envelope) => string;
}

type SentListener = (envelope: Envelope, frameText: string) => void;

export class Dispatcher {
  private readonly opts: DispatcherOptions;
  private readonly listeners = new Set<SentListener>();
  private counter = 0;
  private duplicates = 0;
  private copies = 2;
  private reorderSize = 0;
  private held: Array<{ envelope: Envelope; text: string }> = [];

  constructor(opts: DispatcherOptions) {
    this.opts = opts;
  }

  emit(
    event: number,
    data: Record<string, unknown>,
    opts: { eventId?: string; timestamp?: number; tenant?: string } = {},
  ): Envelope {
    if (!Number.isInteger(event) || event <= 0)
      throw new TypeError('event must be a positive integer');
    if (data === null || typeof data !== 'object' || Array.isArray(data))
      throw new TypeError('data must be an object');
    const now = this.opts.clock.now();
    const envelope: Envelope = {
      event,
      timestamp:
        opts.timestamp ??
        (this.opts.timestampUnit === 's' ? Math.floor(now / 1000) : Math.floor(now)),
      tenant: opts.tenant ?? this.opts.tenant,
      data,
      event_id: opts.eventId ?? `evt_${this.opts.instanceId}_${(++this.counter).toString(36)}`,
    };
    const text = this.opts.encode ? this.opts.encode(envelope) : JSON.stringify(envelope);
    if (this.reorderSize > 0) {
      this.held.push({ envelope, text });
      if (this.held.length >= this.reorderSize) {
        const batch = this.held.reverse();
        this.held = [];
        this.reorderSize = 0;
        for (const item of batch) this.dispatch(item.envelope, item.text);
      }
    } else this.dispatch(envelope, text);
    return envelope;
  }

  /** Each of the next `n` events is sent `copies` times (default twice), the same bytes each time. */
  duplicateNext(n: number, copies = 2): void {
    this.duplicates = Math.max(0, Math.floor(n));
    this.copies = Math.max(2, Math.floor(copies));
  }

  reorderNext(n: number): void {
    this.reorderSize = Math.max(0, Math.floor(n));
    if (this.reorderSize === 0) this.flushHeld();
  }

  /**
   * Sends `text` exactly as given (malformed JSON, missing fields...) to the tenant's sockets
   * subscribed to `event` (any subscribed socket when `event` is omitted) and to the webhooks taking
   * `event` (all when omitted). For client robustness tests; not seen by onSent, not in eventsSent.
   */
  emitRaw(text: string, opts: { event?: number; tenant?: string } = {}): void {
    if (typeof text !== 'string') throw new TypeError('text must be a string');
    if (opts.event !== undefined && !Number.isInteger(opts.event))
      throw new TypeError('event must be an integer');
    const payload = Buffer.from(text, 'utf8');
    for (const target of this.opts.targets)
      target.send(opts.tenant ?? this.opts.tenant, opts.event ?? null, payload);
  }

  onSent(listener: SentListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends anything a reorder fault still holds (in reverse order, as promised). */
  flushHeld(): void {
    const batch = this.held.reverse();
    this.held = [];
    for (const item of batch) this.dispatch(item.envelope, item.text);
  }

  private dispatch(envelope: Envelope, text: string): void {
    const times = this.duplicates > 0 ? this.copies : 1;
    if (this.duplicates > 0) this.duplicates--;
    const payload = Buffer.from(text, 'utf8');
    for (let i = 0; i < times; i++) {
      for (const listener of this.listeners) listener(envelope, text);
      this.opts.stats.eventsSent++;
      for (const target of this.opts.targets) target.send(envelope.tenant, envelope.event, payload);
    }
  }
}
