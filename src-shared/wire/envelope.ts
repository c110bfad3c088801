/**
 * The event envelope at the boundary (docs/wire-protocol.md section 6). Frames arrive as untrusted text from
 * the WebSocket or the relay; this module is the one place that turns text into a typed envelope,
 * and it never throws: every rejected frame comes back with a reason for the counters.
 *
 * Tolerance, as the protocol asks: extra top-level fields are ignored, `timestamp` below 1e11 is
 * seconds (normalised here to ms), `data` of codes other than 30011 is passed on opaque.
 */
import type { EventEnvelope } from './event-codes.ts';

/** Frames larger than this are dropped unparsed (bytes of UTF-16 text length; an envelope is ~300). */
export const MAX_FRAME_CHARS = 64 * 1024;
/** event_id longer than this is rejected: the dedupe set stores ids, so their size must be bounded. */
export const MAX_EVENT_ID_CHARS = 128;
/**
 * call_id, to and state longer than this are rejected. `from`, the caller ID, is chosen by the
 * caller: a longer one is cut to this many code points (and flagged), because the phone rings
 * whatever the caller put there, and the ring must pop.
 */
export const MAX_CALL_FIELD_CHARS = 256;

export { CALL_STATE_CHANGED } from './event-codes.ts';

/**
 * One event as the pipeline handles it: `timestamp` always milliseconds since the Unix epoch
 * (normalised from seconds where needed); `receiptStamped` when the wire carried no time.
 */
export type Envelope = EventEnvelope;

export interface CallStateData {
  call_id: string;
  from: string;
  to: string;
  state: string;
  /** Present when the caller ID was longer than MAX_CALL_FIELD_CHARS and `from` is its start. */
  fromTruncated?: true;
  /** The number the caller dialled (a DID) or the trunk, where the phone system says it. */
  line?: string;
  /** The extension that passed the call on to this party (a transfer), where the system says it. */
  transferred_by?: string;
  /** Yeastar P-Series: the ringing member's `call_path` as reported (untrusted): IVR, queue, ring group. */
  call_path?: string;
  /**
   * The phone system never reported who called (Yeastar P-Series: a trunk without Call Status
   * Monitor); only `true` is read.
   */
  caller_unseen?: true;
}

export type RejectReason = 'oversized' | 'not-json' | 'not-object' | 'bad-field';

export type ParseResult =
  { ok: true; envelope: Envelope } | { ok: false; reason: RejectReason; detail?: string };

/** A frame in a phone system's wire format, as the core's envelopes (none for a code not used). */
export type DecodeResult =
  { ok: true; envelopes: Envelope[] } | { ok: false; reason: RejectReason; detail?: string };

/**
 * Turns one frame's text into envelopes: the one seam between a wire format and the pipeline
 * (src-shared/wire/). `receivedAt` is wall-clock ms, `nowMonotonic` the monotonic clock.
 */
export type FrameDecoder = (text: string, receivedAt: number, nowMonotonic: number) => DecodeResult;

/** The standard service's frames: exactly one envelope each (docs/wire-protocol.md section 6). */
export const decodeStandardFrame: FrameDecoder = (text) => {
  const parsed = parseEnvelope(text);
  return parsed.ok ? { ok: true, envelopes: [parsed.envelope] } : parsed;
};

/** A value below this is a timestamp in seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const SECONDS_LIMIT = 1e11;

export function normaliseTimestamp(value: number): number {
  return value < SECONDS_LIMIT ? value * 1000 : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseEnvelope(text: string): ParseResult {
  if (text.length > MAX_FRAME_CHARS) return { ok: false, reason: 'oversized' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  if (!isPlainObject(raw)) return { ok: false, reason: 'not-object' };
  const { event, timestamp, tenant, data, event_id: eventId } = raw;
  if (typeof event !== 'number' || !Number.isSafeInteger(event) || event < 0) {
    return { ok: false, reason: 'bad-field', detail: 'event' };
  }
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp <= 0) {
    return { ok: false, reason: 'bad-field', detail: 'timestamp' };
  }
  if (typeof tenant !== 'string') return { ok: false, reason: 'bad-field', detail: 'tenant' };
  if (!isPlainObject(data)) return { ok: false, reason: 'bad-field', detail: 'data' };
  if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_EVENT_ID_CHARS) {
    return { ok: false, reason: 'bad-field', detail: 'event_id' };
  }
  return {
    ok: true,
    envelope: {
      event,
      timestamp: normaliseTimestamp(Math.round(timestamp)),
      tenant,
      data,
      event_id: eventId,
    },
  };
}

function boundedString(value: unknown, allowEmpty: boolean): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAX_CALL_FIELD_CHARS &&
    (allowEmpty || value.length > 0)
  );
}

/**
 * The 30011 payload, or undefined when a field is missing or not a string, or when call_id, to or
 * state is too long. A caller ID that is too long is cut (see MAX_CALL_FIELD_CHARS).
 */
export function callStateData(envelope: Envelope): CallStateData | undefined {
  const { call_id: callId, from, to, state } = envelope.data;
  if (!boundedString(callId, false) || !boundedString(to, false) || !boundedString(state, false))
    return undefined;
  // An anonymous caller may come with an empty `from`; that is still a ring.
  if (typeof from !== 'string') return undefined;
  const { line, transferred_by: transferredBy, call_path: callPath } = envelope.data;
  const extra = {
    ...(envelope.data.caller_unseen === true ? { caller_unseen: true as const } : {}),
    ...(boundedString(line, false) ? { line } : {}),
    ...(boundedString(transferredBy, false) ? { transferred_by: transferredBy } : {}),
    ...(boundedString(callPath, false) && callPath.trim() ? { call_path: callPath } : {}),
  };
  if (boundedString(from, true)) return { call_id: callId, from, to, state, ...extra };
  const cut = Array.from(from).slice(0, MAX_CALL_FIELD_CHARS).join('');
  return { call_id: callId, from: cut, to, state, fromTruncated: true, ...extra };
}
