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
   *
   * The shared memory keeps, beside the decoder's memory of the call, the events each of the
   * call's recent reports decoded to (by the body's digest, REPORTS_REMEMBERED_*): its write and
   * the append of those events are two commands, so a report whose append failed (503, or a
   * holder's frame retried) may come again after other reports of the call moved the memory on.
   * Decoded again it would yield nothing, or other envelopes; it gets its first decode's events
   * back instead, and the store keeps them once (their event ids).
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
    const digest = bodyDigest(raw);
    const key = `${tenant}\u0000${digest}`;
    if (this.ringBodies.has(key, this.monotonic())) return { ok: true, events: [], replay: true };
    const decoder = this.decoderOf(tenant);
    for (let attempt = 0; attempt < CALL_MEMORY_ATTEMPTS; attempt += 1) {
      const { version, memory } = await shared.read(tenant, callId);
      const stored = readShared(memory);
      const earlier = stored.reports.find(([d]) => d === digest);
      if (earlier) return this.decoded(key, earlier[1]);
      // Load, decode and export with no await between: no other report of this process interleaves.
      decoder.importCall(callId, stored.call, this.monotonic());
      const result = this.decode(tenant, raw, receivedAt);
      const after = decoder.exportCall(callId, this.monotonic());
      decoder.importCall(callId, null, this.monotonic()); // the shared copy is the one kept
      if (!result.ok || result.replay || !after) return result;
      const text = writeShared(after.text, [...stored.reports, [digest, result.events]]);
      if (text === memory) return result;
      const ttl = after.over ? YEASTAR_ENDED_TTL_MS : YEASTAR_CALL_TTL_MS;
      if (await shared.write(tenant, callId, version, text, ttl)) return result;
    }
    throw new Error('yeastar call memory: too many concurrent reports of one call');
  }

  /** A report's events as its first decode gave them (a retry of it). */
  private decoded(key: string, events: IntakeEvent[]): IntakeResult {
    const rang = events.some((e) => {
      if (e.event !== CALL_STATE_CHANGED) return false;
      try {
        return (JSON.parse(e.body) as { data?: { state?: unknown } }).data?.state === 'ringing';
      } catch {
        return false;
      }
    });
    return {
      ok: true,
      events,
      ...(rang && { delivered: () => this.ringBodies.set(key, true, this.monotonic()) }),
    };
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
    const key = `${tenant}\u0000${bodyDigest(raw)}`;
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

/** 128 bits of a body's digest: a copy of a delivery is the same bytes. */
function bodyDigest(raw: Uint8Array): string {
  return createHash('sha256').update(raw).digest('base64').slice(0, 22);
}

/**
 * Reports of a call whose events the shared memory keeps (the newest; an older one retried past
 * them is decoded again, as before): a call's reports number about ten (a ring group's ring,
 * answer, hang-ups and record), and a report is retried seconds after it failed.
 */
export const REPORTS_REMEMBERED_PER_CALL = 16;
/**
 * ... and their events' characters at most, per call (the newest report's are always kept): about
 * ten envelopes of a call, so a call's memory in Redis grows by a few KB at most, well inside the
 * tenant's bytes (call-memory-redis.ts).
 */
export const REPORTS_REMEMBERED_CHARS = 8 * 1024;

type Reports = [digest: string, events: IntakeEvent[]][];

/**
 * The shared memory's text: `{"call": <the decoder's exportCall text>, "reports": [[digest,
 * events], ...]}`, oldest report first. Text without `call` (written before the reports were kept,
 * or unreadable) is the decoder's text alone; what does not read as events is dropped (never throws).
 */
function readShared(memory: string | null): { call: string | null; reports: Reports } {
  if (memory === null) return { call: null, reports: [] };
  let o: unknown;
  try {
    o = JSON.parse(memory);
  } catch {
    return { call: memory, reports: [] };
  }
  if (typeof o !== 'object' || o === null || typeof (o as { call?: unknown }).call !== 'string')
    return { call: memory, reports: [] };
  const { call, reports } = o as { call: string; reports?: unknown };
  const kept: Reports = [];
  for (const r of Array.isArray(reports) ? reports.slice(-REPORTS_REMEMBERED_PER_CALL) : []) {
    if (!Array.isArray(r) || typeof r[0] !== 'string' || !Array.isArray(r[1])) continue;
    const events = (r[1] as unknown[]).filter(isIntakeEvent);
    if (events.length === (r[1] as unknown[]).length) kept.push([r[0], events]);
  }
  return { call, reports: kept };
}

function isIntakeEvent(e: unknown): e is IntakeEvent {
  if (typeof e !== 'object' || e === null) return false;
  const o = e as Record<string, unknown>;
  return (
    typeof o.eventId === 'string' &&
    typeof o.event === 'number' &&
    (o.to === null || typeof o.to === 'string') &&
    typeof o.body === 'string'
  );
}

/** The shared memory's text, with the newest reports within REPORTS_REMEMBERED_*. */
function writeShared(call: string, reports: Reports): string {
  const kept: Reports = [];
  let chars = 0;
  for (let i = reports.length - 1; i >= 0 && kept.length < REPORTS_REMEMBERED_PER_CALL; i -= 1) {
    const report = reports[i]!;
    chars += report[1].reduce((n, e) => n + e.body.length + e.eventId.length, 0);
    if (kept.length > 0 && chars > REPORTS_REMEMBERED_CHARS) break;
    kept.unshift(report);
  }
  return JSON.stringify({ call, reports: kept });
}
