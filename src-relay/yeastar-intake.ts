/**
 * A Yeastar P-Series tenant's webhook deliveries (docs/phone-systems/yeastar-p-series.md section
 * 7): the vendor's report in the body, decoded by the one decoder the app uses too
 * (src-shared/phone-systems/yeastar-p-series.ts), so the relay stores and hands desktops the core's
 * envelopes, the same stream as a standard tenant's. Each envelope is stamped with the time the
 * relay received the delivery (the report has none), which is what lets a desktop judge a replay
 * after an outage as stale; its event id is the decoder's, the same the app derives on the direct
 * stream, so a ring carried by both pops once.
 */
import { YeastarEventDecoder } from '../src-shared/phone-systems/yeastar-p-series.ts';
import { partyOf } from './envelope.ts';
import type { RejectReason } from './metrics.ts';

/** What the store keeps of one event. */
export interface IntakeEvent {
  eventId: string;
  event: number;
  to: string | null;
  body: string;
}

export type IntakeResult =
  { ok: true; events: IntakeEvent[] } | { ok: false; reason: RejectReason };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** One decoder per tenant and relay process: it remembers which extensions of a call ring. */
export class YeastarIntake {
  private readonly decoders = new Map<string, YeastarEventDecoder>();
  private readonly monotonic: () => number;

  constructor(monotonic: () => number) {
    this.monotonic = monotonic;
  }

  decode(tenant: string, raw: Uint8Array, receivedAt: number): IntakeResult {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return { ok: false, reason: 'not-utf8' };
    }
    let decoder = this.decoders.get(tenant);
    if (!decoder) this.decoders.set(tenant, (decoder = new YeastarEventDecoder()));
    const decoded = decoder.decode(text, receivedAt, this.monotonic());
    if (!decoded.ok)
      return { ok: false, reason: decoded.reason === 'not-json' ? 'not-json' : 'not-envelope' };
    return {
      ok: true,
      events: decoded.envelopes.map((e) => {
        // The relay's clock stamped it: for a desktop that is a server's time, not its own receipt.
        const { receiptStamped: _stamped, ...envelope } = e;
        const body = JSON.stringify({ ...envelope, tenant });
        // Routed as a standard tenant's envelope is (one table of whom an event is for).
        return { eventId: e.event_id, event: e.event, to: partyOf(e.event, e.data), body };
      }),
    };
  }
}
