import {
  CALL_RECORD,
  CALL_STATE_CHANGED,
  PRESENCE_CHANGED,
  SMS_RECEIVED,
  TRUNK_STATUS_CHANGED,
  VOICEMAIL_RECEIVED,
} from '../src-shared/wire/event-codes.ts';

/**
 * Reads the few envelope fields the relay routes on, from a body whose signature already holds.
 * The body itself is kept and forwarded byte for byte; this parse only decides storage and routing.
 */
export interface RoutedEnvelope {
  eventId: string;
  event: number;
  tenant: string;
  /** The party the event is addressed to (partyOf), else null. */
  to: string | null;
  /** The body as text (the original bytes, validated as UTF-8 so a text frame carries them exactly). */
  text: string;
}

/**
 * Which field of `data` names the extension or number an event is addressed to, per event code
 * (docs/wire-protocol.md section 6): a call's called party, a call record's callee, a voicemail's
 * extension, an SMS's recipient, a presence change's extension. Routing and the organisation-mode
 * filter read it; the one table of what belongs to whom.
 */
const PARTY_FIELD: ReadonlyMap<number, string> = new Map([
  [CALL_STATE_CHANGED, 'to'],
  [CALL_RECORD, 'to'],
  [VOICEMAIL_RECEIVED, 'extension'],
  [SMS_RECEIVED, 'to'],
  [PRESENCE_CHANGED, 'extension'],
]);

/** Codes addressed to one party (PARTY_FIELD): in organisation mode only that party gets them. */
export const PARTY_CODES: ReadonlySet<number> = new Set(PARTY_FIELD.keys());

/**
 * Codes a desktop asks for in its filter's `events` but gets only when addressed to it (like
 * calls), in either mode: a call record (a phone system's CDR, History's talk time) of a call to
 * one of its extensions or numbers, not every record of the tenant.
 */
export const ADDRESSED_OPT_IN_CODES: ReadonlySet<number> = new Set([CALL_RECORD]);

/** Codes about the whole tenant, sent to every user who asks in organisation mode (trunk status). */
export const TENANT_WIDE_CODES: ReadonlySet<number> = new Set([TRUNK_STATUS_CHANGED]);

/** The party an event is addressed to (at most 256 characters), or null. */
export function partyOf(event: number, data: Record<string, unknown>): string | null {
  const field = PARTY_FIELD.get(event);
  const value = field === undefined ? undefined : data[field];
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : null;
}

/** Who made a call, per code whose record names its caller too: a call record's `data.from`. */
const CALLER_FIELD: ReadonlyMap<number, string> = new Map([[CALL_RECORD, 'from']]);

/**
 * The extension that made the call an event records (a call record's `data.from`: an outbound
 * call's record is the caller's as much as the callee's), or null. Only an extension matches it
 * (callerMatches): the caller of an inbound record is an outside number, never a user's. Read
 * from the stored body, so every store and every stored event has it. Not cached: only a call
 * record (one per call) is read, by the fan-out and the few sessions it goes to, about 1 µs a
 * read (200,000 records of 396 bytes: 0.8-0.9 µs, no faster with a per-event cache, which was
 * module-level state for nothing).
 */
export function callerOf(event: { event: number; body: string | Uint8Array }): string | null {
  const field = CALLER_FIELD.get(event.event);
  if (field === undefined) return null;
  let caller: string | null = null;
  try {
    const text = typeof event.body === 'string' ? event.body : utf8.decode(event.body);
    const data = (JSON.parse(text) as { data?: unknown }).data;
    if (data && typeof data === 'object' && !Array.isArray(data)) {
      const value = (data as Record<string, unknown>)[field];
      if (typeof value === 'string' && value.length > 0 && value.length <= 256) caller = value;
    }
  } catch {
    caller = null; // a body the intake took is JSON; anything else routes to nobody more
  }
  return caller;
}

export type EnvelopeResult =
  | { ok: true; envelope: RoutedEnvelope }
  | { ok: false; reason: 'not-utf8' | 'not-json' | 'not-envelope' };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function readEnvelope(raw: Uint8Array): EnvelopeResult {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, reason: 'not-utf8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, reason: 'not-envelope' };
  const v = value as Record<string, unknown>;
  const eventId = v.event_id;
  const event = v.event;
  const tenant = v.tenant;
  const data = v.data;
  if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > 200)
    return { ok: false, reason: 'not-envelope' };
  if (typeof event !== 'number' || !Number.isInteger(event))
    return { ok: false, reason: 'not-envelope' };
  if (typeof tenant !== 'string') return { ok: false, reason: 'not-envelope' };
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return { ok: false, reason: 'not-envelope' };
  const to = partyOf(event, data as Record<string, unknown>);
  return { ok: true, envelope: { eventId, event, tenant, to, text } };
}
