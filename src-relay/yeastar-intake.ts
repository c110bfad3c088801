/**
 * A Yeastar P-Series tenant's webhook deliveries (docs/phone-systems/yeastar-p-series.md section
 * 7): the vendor's report in the body, decoded by the one decoder the app uses too
 * (src-shared/phone-systems/yeastar-p-series.ts), so the relay stores and hands desktops the core's
 * envelopes, the same stream as a standard tenant's. Each envelope is stamped with the time the
 * relay received the delivery (the report has none), which is what lets a desktop judge a replay
 * after an outage as stale; its event id is the decoder's, the same the app derives on the direct
 * stream, so a ring carried by both pops once.
 *
 * The vendor's signature covers the body alone, with no time in it: a delivery captured on the way
 * can be sent again, signed, at any time, and the relay would stamp it afresh. The store's dedupe
 * catches a copy for 25 hours; a ring sent again after that would pop on a desktop as a new call.
 * So the bodies of delivered reports that rang are remembered for longer (RING_BODIES_*), and a
 * copy of one is acknowledged and not decoded. Status reports (trunk, presence) need no such
 * memory: their ids come from their content (src-shared/phone-systems/status-changes.ts).
 */
import { createHash } from 'node:crypto';
import { BoundedFifoMap } from '../src-shared/kit/bounded-map.ts';
import { CALL_STATE_CHANGED } from '../src-shared/wire/event-codes.ts';
import {
  YEASTAR_CALL_TTL_MS,
  YEASTAR_ENDED_TTL_MS,
  YeastarEventDecoder,
} from '../src-shared/phone-systems/yeastar-p-series.ts';
import type { SharedCallMemory } from './store/call-memory-redis.ts';
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
  | {
      ok: true;
      events: IntakeEvent[];
      /** The body was delivered and kept before: a copy, acknowledged and stored as nothing. */
      replay?: true;
      /** Call once the events are stored: remembers a body that rang, so a copy is a replay. */
      delivered?: () => void;
    }
  | { ok: false; reason: RejectReason };

/**
 * Ring-bearing bodies remembered, for every tenant of the process: about two reports ring per call
 * (the ring, and the ring listed again beside the caller's hang-up), so 100,000 cover 50,000 calls,
 * two days of a 1,000-calls-an-hour tenant, past the store's 25-hour dedupe. About 100 bytes each:
 * 10 MB at most, held only as rings come.
 */
export const RING_BODIES_REMEMBERED = 100_000;
/** ... and for at most a week (a quiet tenant's copies are refused that long). */
export const RING_BODIES_TTL_MS = 7 * 24 * 3600_000;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Reads of the shared call memory before a report gives up (each lost to another instance). */
export const CALL_MEMORY_ATTEMPTS = 8;

/**
 * One decoder per tenant and relay process: it remembers which extensions of a call ring. With a
 * shared call memory (Redis), a call report's memory is loaded from it before decoding and stored
 * back under compare-and-set after (`receive`), so a call's reports decode the same whichever
 * instance they reach; without one (the memory store), the process's decoder keeps it.
 */
export class YeastarIntake {
  private readonly decoders = new Map<string, YeastarEventDecoder>();
  private readonly ringBodies = new BoundedFifoMap<true>(
    RING_BODIES_REMEMBERED,
    RING_BODIES_TTL_MS,
  );
  private readonly monotonic: () => number;

  private readonly shared: SharedCallMemory | undefined;

  constructor(monotonic: () => number, shared?: SharedCallMemory) {
    this.monotonic = monotonic;
    this.shared = shared;
  }

  /**
   * One delivery, through the shared call memory when there is one. Rejects when that memory
   * fails (Redis down or slow, or CALL_MEMORY_ATTEMPTS lost races): the caller answers 503 and the
   * phone system retries, as for any storage fault.
   */
  async receive(tenant: string, raw: Uint8Array, receivedAt: number): Promise<IntakeResult> {
    const shared = this.shared;
    if (!shared) return this.decode(tenant, raw, receivedAt);
    let callId: string | undefined;
    try {
      callId = YeastarEventDecoder.callIdOf(utf8.decode(raw));
    } catch {
      callId = undefined;
    }
    if (callId === undefined) return this.decode(tenant, raw, receivedAt);
    const decoder = this.decoderOf(tenant);
    for (let attempt = 0; attempt < CALL_MEMORY_ATTEMPTS; attempt += 1) {
      const { version, memory } = await shared.read(tenant, callId);
      // Load, decode and export with no await between: no other report of this process interleaves.
      decoder.importCall(callId, memory, this.monotonic());
      const result = this.decode(tenant, raw, receivedAt);
      const after = decoder.exportCall(callId, this.monotonic());
      decoder.importCall(callId, null, this.monotonic()); // the shared copy is the one kept
      if (!result.ok || result.replay || !after || after.text === memory) return result;
      const ttl = after.over ? YEASTAR_ENDED_TTL_MS : YEASTAR_CALL_TTL_MS;
      if (await shared.write(tenant, callId, version, after.text, ttl)) return result;
    }
    throw new Error('yeastar call memory: too many concurrent reports of one call');
  }

  private decoderOf(tenant: string): YeastarEventDecoder {
    let decoder = this.decoders.get(tenant);
    if (!decoder) this.decoders.set(tenant, (decoder = new YeastarEventDecoder()));
    return decoder;
  }

  decode(tenant: string, raw: Uint8Array, receivedAt: number): IntakeResult {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return { ok: false, reason: 'not-utf8' };
    }
    // 128 bits of the body's digest, with the tenant: a copy of a delivery is the same bytes.
    const key = `${tenant}\u0000${createHash('sha256').update(raw).digest('base64').slice(0, 22)}`;
    if (this.ringBodies.has(key, this.monotonic())) return { ok: true, events: [], replay: true };
    const decoded = this.decoderOf(tenant).decode(text, receivedAt, this.monotonic());
    if (!decoded.ok)
      return { ok: false, reason: decoded.reason === 'not-json' ? 'not-json' : 'not-envelope' };
    const rang = decoded.envelopes.some(
      (e) => e.event === CALL_STATE_CHANGED && e.data.state === 'ringing',
    );
    return {
      ok: true,
      events: decoded.envelopes.map((e) => {
        // The relay's clock stamped it: for a desktop that is a server's time, not its own receipt.
        const { receiptStamped: _stamped, ...envelope } = e;
        const body = JSON.stringify({ ...envelope, tenant });
        // Routed as a standard tenant's envelope is (one table of whom an event is for).
        return { eventId: e.event_id, event: e.event, to: partyOf(e.event, e.data), body };
      }),
      // Remembered only once stored: a delivery the relay answered 503 comes again, and must pass.
      ...(rang && { delivered: () => this.ringBodies.set(key, true, this.monotonic()) }),
    };
  }
}
