/**
 * The rest of the event catalogue at the boundary (docs/wire-protocol.md section 6): presence
 * (30009), trunk status (30007), voicemail (30015) and inbound SMS (30031). One parser per code;
 * each reads only the fields it uses, ignores the others, and returns undefined for a payload that
 * does not fit (the pipeline counts it as `bad-notice-data`, never a crash).
 *
 * Every string here is chosen by someone outside: a caller, a texter, the phone system. Strings are
 * made well-formed UTF-16 and bounded here; making them fit to show (no controls, no bidi overrides,
 * no zero-width tricks) is displayText's job (src-shared/ui/text.ts), applied where they are shown.
 */
import { MAX_CALL_FIELD_CHARS, type Envelope } from '../../../src-shared/wire/envelope.ts';

export {
  PRESENCE_CHANGED,
  SMS_RECEIVED,
  TRUNK_STATUS_CHANGED,
  VOICEMAIL_RECEIVED,
} from '../../../src-shared/wire/event-codes.ts';

/** The service sends at most this many characters of SMS text; a longer text is cut and flagged. */
export const MAX_SMS_TEXT_CHARS = 1600;
/** voicemail_id and message_id: the dedupe remembers them, so their size is bounded. */
export const MAX_NOTICE_ID_CHARS = 128;
/** A voicemail longer than a day is not a voicemail; such a duration is dropped, not shown. */
export const MAX_VOICEMAIL_SEC = 24 * 60 * 60;

export interface VoicemailData {
  voicemail_id: string;
  extension: string;
  /** Caller ID: untrusted, at most 256 code points (fromTruncated says when cut). */
  from: string;
  fromTruncated?: true;
  /** The name the phone system has for the caller; null when absent or empty. Untrusted. */
  caller_name: string | null;
  /** Whole seconds; null when absent or not a plausible duration. */
  duration_sec: number | null;
}

export interface SmsData {
  message_id: string;
  from: string;
  fromTruncated?: true;
  /** The DID (or extension) the message was sent to. */
  to: string;
  /** At most MAX_SMS_TEXT_CHARS code points; untrusted, shown only as inert text. */
  text: string;
  textTruncated?: true;
}

export interface TrunkData {
  trunk: string;
  /** `registered` is the only status in which calls from outside can come in over the trunk. */
  status: string;
}

export interface PresenceData {
  extension: string;
  /** `available`, `away`, `do_not_disturb`, ... (the list is open). */
  presence_status: string;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A required, non-empty string of at most `max` chars, made well-formed; else undefined. */
function field(value: unknown, max = MAX_CALL_FIELD_CHARS): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) return undefined;
  return value.replace(LONE_SURROGATE, '\uFFFD');
}

/** A string cut to `max` code points (flagged), or undefined when not a string. */
function cutField(value: unknown, max: number): { text: string; cut: boolean } | undefined {
  if (typeof value !== 'string') return undefined;
  const wellFormed = value.replace(LONE_SURROGATE, '\uFFFD');
  if (wellFormed.length <= max) return { text: wellFormed, cut: false };
  const points = Array.from(wellFormed);
  if (points.length <= max) return { text: wellFormed, cut: false };
  return { text: points.slice(0, max).join(''), cut: true };
}

export function voicemailData(envelope: Envelope): VoicemailData | undefined {
  const d = envelope.data;
  const id = field(d.voicemail_id, MAX_NOTICE_ID_CHARS);
  const extension = field(d.extension);
  const from = cutField(d.from, MAX_CALL_FIELD_CHARS);
  if (!id || !extension || !from) return undefined;
  const name = cutField(d.caller_name, MAX_CALL_FIELD_CHARS);
  const sec = d.duration_sec;
  const duration =
    typeof sec === 'number' && Number.isFinite(sec) && sec >= 0 && sec <= MAX_VOICEMAIL_SEC
      ? Math.round(sec)
      : null;
  return {
    voicemail_id: id,
    extension,
    from: from.text,
    ...(from.cut ? { fromTruncated: true as const } : {}),
    caller_name: name && name.text.trim() ? name.text : null,
    duration_sec: duration,
  };
}

export function smsData(envelope: Envelope): SmsData | undefined {
  const d = envelope.data;
  const id = field(d.message_id, MAX_NOTICE_ID_CHARS);
  const to = field(d.to);
  const from = cutField(d.from, MAX_CALL_FIELD_CHARS);
  const text = cutField(d.text, MAX_SMS_TEXT_CHARS);
  if (!id || !to || !from || !text) return undefined;
  return {
    message_id: id,
    from: from.text,
    ...(from.cut ? { fromTruncated: true as const } : {}),
    to,
    text: text.text,
    ...(text.cut ? { textTruncated: true as const } : {}),
  };
}

export function trunkData(envelope: Envelope): TrunkData | undefined {
  const trunk = field(envelope.data.trunk);
  const status = field(envelope.data.status, 64);
  return trunk && status ? { trunk, status } : undefined;
}

export function presenceData(envelope: Envelope): PresenceData | undefined {
  const extension = field(envelope.data.extension);
  const status = field(envelope.data.presence_status, 64);
  return extension && status ? { extension, presence_status: status } : undefined;
}
