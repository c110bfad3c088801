/**
 * A phone system's call API, as Screenpop uses it (Yeastar P-Series: docs/phone-systems/
 * yeastar-p-series.md section 10, "Call control"): the requests of *Make a Call* (`call/dial`),
 * *Transfer a Call* (`call/transfer`), *Hang up a Call* (`call/hangup`) and *Query Calls*
 * (`call/query`), the validation of their answers at the boundary, and what a failure means to
 * the one who asked (a refusal id and its words). The requests themselves go through the one
 * service client (`ServiceClient.dial` ...), so they share its time-out, transport, token placing
 * and scrubbing: no token reaches an error or a log.
 *
 * The refusal ids are those of the core's CallControl port (src-main/core/ports/call-control.ts,
 * which src-shared may not import: the core assigns one to the other, so a drift does not compile).
 */
import { asObject, protocolError } from './wire.ts';
import { describeError, isServiceError, ServiceError } from './service-errors.ts';
import { english, phrase, type Words } from '../i18n/phrase.ts';
import { previewText } from '../ui/text.ts';

type Json = Record<string, unknown>;

/** *Make a Call*: the caller rings first (an extension), then the PBX calls `callee`. */
export interface DialRequest {
  /** The user's own extension. */
  caller: string;
  /** The number or extension to call, as the PBX dials it. */
  callee: string;
  /** An extension whose dial permission the call uses (the page's `dial_permission`). */
  dialPermission?: string;
  /** The page's `auto_answer` (`yes`/`no`): the caller's IP phone picks up by itself. */
  autoAnswer?: boolean;
}

/** What *Transfer a Call* does at the attended transfer's second request (`attended_operate`). */
export type AttendedOperation = 'abort' | 'complete' | 'threeway' | 'swap';

/**
 * *Transfer a Call*: blind (the transferred member's channel and a number), an attended transfer
 * started (the transferring member's channel and a number), or an attended transfer's operation.
 */
export type TransferRequest =
  | { type: 'blind' | 'attended'; channelId: string; number: string; dialPermission?: string }
  | { type: 'attended'; channelId: string; operate: AttendedOperation };

/**
 * *uaCSTA - Accept a Call* / *- Refuse a Call* (section 10, "Remote answer"): the extension, the
 * uaCSTA call id and the phone's `ip_address` (IP and SIP port), all three from a (30020) report.
 */
export interface UacstaRequest {
  extension: string;
  uacstaCallId: string;
  ipAddress: string;
}

export type UacstaOperation = 'accept' | 'refuse';

/** The JSON body of uacsta_call/accept or uacsta_call/refuse. */
export function uacstaBody(
  operation: UacstaOperation,
  request: UacstaRequest,
): Record<string, string> {
  const op = `uacsta_call/${operation}`;
  return {
    extension: requestField(op, 'extension', request.extension),
    call_id: requestField(op, 'call_id', request.uacstaCallId),
    ip_address: requestField(op, 'ip_address', request.ipAddress),
  };
}

/** What an action answered: the call's id (`call_id`), where the answer carries one. */
export interface CallAnswer {
  callId?: string;
}

/** One member of a call in *Query Calls* (and in the 30011 report, the same fields). */
export interface CallMember {
  kind: 'extension' | 'inbound' | 'outbound';
  /** The extension's number, or the far number (`from` of an inbound, `to` of an outbound member). */
  number: string;
  channelId?: string;
  /** `member_status` as the PBX says it (ALERT, RING, ANSWERED, ANSWER, HOLD, BYE, ...). */
  status: string;
}

export interface CallInfo {
  callId: string;
  members: CallMember[];
}

/** Longest call id, channel id or number we send or keep: the PBX's are far shorter. */
export const MAX_CALL_FIELD_CHARS = 128;
/** At most this many calls from one *Query Calls* answer, and members of one call. */
export const MAX_QUERIED_CALLS = 200;
export const MAX_CALL_MEMBERS = 32;

/** A call id or channel id as the PBX writes them (`1648627871.65`, `PJSIP/1005-00000023`). */
const ID_PATTERN = /^[\w.:/@+-]{1,128}$/;

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Whether `id` is shaped like a PBX's call id or channel id (short, no spaces or controls). */
export function isCallId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** An id from the PBX, or undefined where it is missing or not shaped like one. */
function idOf(value: unknown): string | undefined {
  const id = text(value);
  return id !== undefined && isCallId(id) ? id : undefined;
}

/**
 * A field we are about to send: non-empty, no longer than MAX_CALL_FIELD_CHARS, no control
 * characters. Refused here (our own request would be malformed), never sent.
 */
export function requestField(operation: string, name: string, value: string): string {
  const v = value.trim();
  // eslint-disable-next-line no-control-regex
  if (!v || v.length > MAX_CALL_FIELD_CHARS || /[\u0000-\u001f\u007f]/.test(v))
    throw new ServiceError({
      kind: 'bad-request',
      message: `${operation}: "${name}" is not a usable value`,
    });
  return v;
}

/** The JSON body of call/dial (*Make a Call*). */
export function dialBody(request: DialRequest): Record<string, string> {
  const op = 'call/dial';
  return {
    caller: requestField(op, 'caller', request.caller),
    callee: requestField(op, 'callee', request.callee),
    ...(request.dialPermission !== undefined && {
      dial_permission: requestField(op, 'dial_permission', request.dialPermission),
    }),
    ...(request.autoAnswer !== undefined && { auto_answer: request.autoAnswer ? 'yes' : 'no' }),
  };
}

/** The JSON body of call/transfer (*Transfer a Call*). */
export function transferBody(request: TransferRequest): Record<string, string> {
  const op = 'call/transfer';
  const body: Record<string, string> = {
    type: request.type,
    channel_id: requestField(op, 'channel_id', request.channelId),
  };
  if ('operate' in request) body.attended_operate = request.operate;
  else {
    body.number = requestField(op, 'number', request.number);
    if (request.dialPermission !== undefined)
      body.dial_permission = requestField(op, 'dial_permission', request.dialPermission);
  }
  return body;
}

/**
 * The answer of call/dial, call/transfer or call/hangup (`errcode` 0 already checked by the
 * client): its `call_id`. `required` (call/dial: the id is how Screenpop knows its own call)
 * makes a missing or malformed id a protocol error; elsewhere it is simply absent.
 */
export function parseCallAnswer(body: unknown, operation: string, required = false): CallAnswer {
  const obj = asObject(body, operation);
  const callId = idOf(obj.call_id);
  if (callId === undefined && required)
    throw protocolError(operation, 'the answer lacks a usable "call_id"');
  return callId === undefined ? {} : { callId };
}

const MEMBER_KINDS = ['extension', 'inbound', 'outbound'] as const;

function memberOf(entry: unknown): CallMember | undefined {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  for (const kind of MEMBER_KINDS) {
    const info = (entry as Json)[kind];
    if (info === null || typeof info !== 'object' || Array.isArray(info)) continue;
    const m = info as Json;
    const raw = kind === 'extension' ? m.number : kind === 'inbound' ? m.from : m.to;
    const number = previewText(text(raw) ?? '', 64);
    const status = previewText(text(m.member_status) ?? '', 16).toUpperCase();
    const channelId = idOf(m.channel_id);
    return { kind, number, status, ...(channelId !== undefined && { channelId }) };
  }
  return undefined;
}

/**
 * The answer of call/query (*Query Calls*): `data`, a list of `{call_id, members}`. Tolerant like
 * the lists: an entry without a usable `call_id` or a member of no known kind is skipped; at most
 * MAX_QUERIED_CALLS calls of MAX_CALL_MEMBERS members. A missing `data` is no call.
 */
export function parseCallQuery(body: unknown, operation = 'call/query'): CallInfo[] {
  const obj = asObject(body, operation);
  const data = obj.data ?? [];
  if (!Array.isArray(data)) throw protocolError(operation, 'the answer\'s "data" is not a list');
  const calls: CallInfo[] = [];
  for (const entry of data.slice(0, MAX_QUERIED_CALLS)) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const callId = idOf((entry as Json).call_id);
    if (callId === undefined) continue;
    const rawMembers = (entry as Json).members;
    const members: CallMember[] = [];
    if (Array.isArray(rawMembers))
      for (const raw of rawMembers.slice(0, MAX_CALL_MEMBERS)) {
        const member = memberOf(raw);
        if (member) members.push(member);
      }
    calls.push({ callId, members });
  }
  return calls;
}

/**
 * Why a call action failed, as the CallControl port names it (src-main/core/ports/call-control.ts;
 * this is the part a phone system's API can say, plus the checks made before asking it).
 */
export const CALL_REFUSALS = [
  'not-offered', // this phone system (or this phone, for answer/decline) has no such action
  'invalid-number', // not a dialable number (the phone-number module said so)
  'permission', // the phone system refused: the API application lacks the permission (10005)
  'not-own-extension', // organisation mode: the relay acts only on the user's own extensions
  'revoked', // organisation mode: the administrator revoked this user (relay errcode 46002); ask them
  'sign-in-expired', // organisation mode: the sign-in is unknown or expired (46001); sign in again
  'no-such-call', // the call ended or is not one of the user's
  'rate-limited',
  'unreachable', // the phone system or relay could not be reached
  'uncertain', // sent, but its result is unknown (the relay's holder stopped, or a time-out)
  'refused', // any other refusal by the far side
] as const;
export type CallRefusalId = (typeof CALL_REFUSALS)[number];

/** Whether a value from outside (the relay's answer, the control socket's) is one of the ids. */
export function isCallRefusal(value: unknown): value is CallRefusalId {
  return typeof value === 'string' && (CALL_REFUSALS as readonly string[]).includes(value);
}

/** A refusal as the port returns it: the id, the words to show, and their English. */
export interface CallRefusal {
  ok: false;
  refusal: CallRefusalId;
  words: Words;
  message: string;
}

/** The refusal `id`'s words, with `detail` (a fault's reason) said after them where given. */
export function callRefusal(
  id: CallRefusalId,
  values?: Readonly<Record<string, string>>,
  detail: Words = [],
): CallRefusal {
  const words: Words = [phrase(`status.call.refused.${id}`, values), ...detail];
  return { ok: false, refusal: id, words, message: english(words) };
}

/** A number the phone-number module refused, quoted (shortened) in the words. */
export function invalidNumberRefusal(number: string): CallRefusal {
  return callRefusal('invalid-number', { number: previewText(number, 40) || '""' });
}

/** A call action while there is no connection (not set up, paused, reconnecting). */
export function notConnectedRefusal(): CallRefusal {
  return callRefusal('unreachable', undefined, [phrase('status.call.not-connected')]);
}

/** What a ServiceError kind means to the one who asked for a call action. */
function refusalIdOf(error: ServiceError): CallRefusalId {
  switch (error.kind) {
    case 'scope':
      // 10005 ACCESS DENIED, 70084 ACTION FORBIDDEN: the API application lacks the permission.
      return 'permission';
    case 'rate-limit':
      return 'rate-limited';
    case 'unsupported':
      // 10001 INTERFACE NOT EXISTED: this PBX has no such call (an older firmware, the API off).
      return 'not-offered';
    case 'timeout':
      // No answer in time: the request may have reached the phone system and been carried out.
      return 'uncertain';
    case 'network':
    case 'proxy':
    case 'certificate':
    case 'not-service':
      return 'unreachable';
    default:
      return 'refused';
  }
}

/**
 * A failed call action (anything the client threw) as a refusal: the id, and the words of the
 * fault said after the refusal's own (the same table as every other fault, so the runner, the
 * tray and the popup say the same). The message is the client's, already scrubbed of tokens.
 */
export function callRefusalOf(error: unknown): CallRefusal {
  if (!isServiceError(error))
    return callRefusal('refused', undefined, describeError(error).words.reason);
  const id = refusalIdOf(error);
  // The permission's own words name it; the fault's reason would only repeat it.
  return callRefusal(id, undefined, id === 'permission' ? [] : describeError(error).words.reason);
}
