/**
 * (30020) uaCSTA Call, decoded as data (docs/phone-systems/yeastar-p-series.md section 10): the
 * PBX reports that an extension registered on a uaCSTA desk phone rings (`call_start`), or that a
 * call was answered (`call_answer`) or hung up or refused (`call_over`) by uaCSTA. The report is
 * `{"type":30020,"sn":"...","msg":<uaCSTA_Info>}`, `msg` a JSON-encoded object (as every event
 * page prints it) or an object.
 *
 * It is not a core envelope: it carries no caller and no 30011 call id, so it pops nothing. It is
 * what remote answer needs to send `uacsta_call/accept` / `refuse` (the uaCSTA `call_id` and the
 * phone's `ip_address`), matched to a popped call by `src-main/core/calls/uacsta-match.ts` only
 * where the match is certain. Every field is validated and bounded here; anything else is a
 * reason, never a throw.
 */
import { YEASTAR_MAX_FRAME_CHARS } from './yeastar-p-series.ts';
import { parseDeskPhoneAddress, type DeskPhoneAddress } from '../rules/desk-phone-address.ts';

/** The event's code ("(30020) uaCSTA Call", *API Interfaces & Events Summary*). */
export const YEASTAR_UACSTA_EVENT = 30020;

/** The page's three operations. */
export const UACSTA_OPERATIONS = ['call_start', 'call_answer', 'call_over'] as const;
export type UacstaOperation = (typeof UACSTA_OPERATIONS)[number];

/** An extension number as the PBX reports it (digits; the guide's are 3 to 7 long). */
const EXTENSION = /^\d{1,16}$/;
/** A uaCSTA call id: the page's example is `32789`; read as a short token, no spaces or controls. */
const UACSTA_CALL_ID = /^[\w.:-]{1,64}$/;

export interface UacstaReport {
  operation: UacstaOperation;
  extension: string;
  /** The uaCSTA call id (`call_id` of the report: not the 30011 call id). */
  uacstaCallId: string;
  /** `ip_address` as reported (IP and SIP port), what the accept/refuse request sends back. */
  ipAddress: string;
  /** The same, parsed: what Settings' phone address is compared with. */
  phone: DeskPhoneAddress;
}

export type UacstaDecodeResult =
  | { ok: true; report: UacstaReport }
  | { ok: false; reason: 'not-uacsta' | 'oversized' | 'not-json' | 'bad-field'; detail?: string };

function text(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return typeof value === 'string' ? value.trim() : undefined;
}

function payload(msg: unknown): Record<string, unknown> | undefined {
  let value = msg;
  if (typeof msg === 'string') {
    try {
      value = JSON.parse(msg);
    } catch {
      return undefined;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** One frame's text: a uaCSTA report, or why not (another event is `not-uacsta`). */
export function decodeUacstaReport(frameText: string): UacstaDecodeResult {
  if (frameText.length > YEASTAR_MAX_FRAME_CHARS) return { ok: false, reason: 'oversized' };
  let frame: unknown;
  try {
    frame = JSON.parse(frameText);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame))
    return { ok: false, reason: 'not-json' };
  return decodeUacstaFrame(frame as Record<string, unknown>);
}

/** A frame already parsed (the stream's decoder parses once). */
export function decodeUacstaFrame(frame: Record<string, unknown>): UacstaDecodeResult {
  if (frame.type !== YEASTAR_UACSTA_EVENT) return { ok: false, reason: 'not-uacsta' };
  const msg = payload(frame.msg);
  if (!msg) return { ok: false, reason: 'bad-field', detail: 'msg' };
  const operation = text(msg.operation);
  if (!operation || !(UACSTA_OPERATIONS as readonly string[]).includes(operation))
    return { ok: false, reason: 'bad-field', detail: 'operation' };
  const extension = text(msg.extension);
  if (!extension || !EXTENSION.test(extension))
    return { ok: false, reason: 'bad-field', detail: 'extension' };
  const uacstaCallId = text(msg.call_id);
  if (!uacstaCallId || !UACSTA_CALL_ID.test(uacstaCallId))
    return { ok: false, reason: 'bad-field', detail: 'call_id' };
  const ipAddress = text(msg.ip_address) ?? '';
  const phone = parseDeskPhoneAddress(ipAddress);
  if (!phone) return { ok: false, reason: 'bad-field', detail: 'ip_address' };
  return {
    ok: true,
    report: { operation: operation as UacstaOperation, extension, uacstaCallId, ipAddress, phone },
  };
}
