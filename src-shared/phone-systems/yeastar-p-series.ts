/**
 * Yeastar P-Series event frames, decoded into the core's envelopes (src-shared/event-codes.ts).
 * Every fact and every assumption behind this file is in docs/phone-systems/yeastar-p-series.md,
 * with the page of the vendor's developer guide it comes from; read that first.
 *
 * A frame is `{"type":<code>,"sn":"<PBX serial>","msg":<payload>}`, where `msg` is a JSON-encoded
 * string or an object. It carries no event id and no time. This decoder
 * - turns a 30011 (call state) frame, which lists every member of one call with its status, into
 *   one core 30011 envelope per extension member: `to` its number, `state` its status in the
 *   core's words (only RING is `ringing`), `from` the caller (the inbound member's `from`, else the
 *   extension that is calling: ALERT), `line` the number dialled (the inbound `to`, else its trunk);
 * - remembers, per call, which extensions were ringing: one that a later frame of the call no longer
 *   lists is `ended` there (a ring group answered by a colleague drops the others);
 * - turns 30010 (trunk registration, numeric status) into the core's 30007 and 30009 (presence)
 *   into the core's 30009;
 * - stamps each frame with the time it was received (strictly increasing per decoder), and makes
 *   each envelope's event_id from what makes two frames the same event (see eventIdOf).
 *
 * Used by the app on the direct stream and by the relay on the vendor's webhooks, so both derive
 * the same ids for the same member state (a ring carried by both is popped once). It never throws:
 * a frame that does not fit comes back with a reason, as the standard envelope parser's do.
 */
import { createHash } from 'node:crypto';
import { BoundedFifoMap } from '../bounded-map.ts';
import { StatusChanges } from './status-changes.ts';
import {
  CALL_STATE_CHANGED,
  PRESENCE_CHANGED,
  TRUNK_STATUS_CHANGED,
  type EventEnvelope,
} from '../event-codes.ts';
// A type only: this module needs no words (the relay's webhook intake loads it).
import type { ErrcodeReader } from '../service-errors.ts';

/** The vendor's event codes we read ("API Events Overview", event pages "(300xx) ..."). */
export const YEASTAR_EVENT = {
  extensionRegistration: 30007,
  extensionCallState: 30008,
  presence: 30009,
  trunkRegistration: 30010,
  callState: 30011,
} as const;

/** The vendor's errcodes we act on ("Error Code and Error Message", "Response Result"). */
export const YEASTAR_ERRCODE = {
  ok: 0,
  failure: -1,
  internalServerError: -2,
  interfaceNotExisted: 10001,
  apiVersionOutOfMaintenance: 10002,
  apiVersionUnsupported: 10003,
  tokenExpired: 10004,
  accessDenied: 10005,
  parameterSyntaxError: 40001,
  parameterError: 40002,
  duplicateKeyValue: 40003,
  fileSizeExceeded: 40004,
  maxLimitationExceeded: 60002,
  accountIpBlocked: 70004,
  actionForbidden: 70084,
  ipForbidden: 70087,
} as const;

/**
 * The P-Series errcodes (section 6 of the doc, from "Error Code and Error Message"), as what the
 * app does about them and in the system's own terms. The one table: the app's API calls and stream
 * (src-shared/wire/) and the relay's token check (src-relay/auth.ts) read it.
 */
export const yeastarErrcodes: ErrcodeReader = (errcode, operation, httpStatus) => {
  switch (errcode) {
    case YEASTAR_ERRCODE.failure:
      // get_token's refusal of the Client ID or Secret ("Response Result"); a refused refresh
      // token is answered by a new get_token.
      if (operation === 'get_token') return { kind: 'credentials', fault: 'ys-credentials' };
      if (operation === 'refresh_token') return { kind: 'expired' };
      return { kind: 'server' };
    case YEASTAR_ERRCODE.internalServerError:
      return { kind: 'server' };
    case YEASTAR_ERRCODE.interfaceNotExisted:
      return { kind: 'unsupported', fault: 'ys-api-off' };
    case YEASTAR_ERRCODE.apiVersionOutOfMaintenance:
    case YEASTAR_ERRCODE.apiVersionUnsupported:
      return { kind: 'unsupported', fault: 'ys-api-version' };
    case YEASTAR_ERRCODE.tokenExpired:
      return { kind: 'expired' };
    case YEASTAR_ERRCODE.accessDenied:
    case YEASTAR_ERRCODE.actionForbidden:
      return { kind: 'scope', fault: 'ys-access-denied' };
    case YEASTAR_ERRCODE.parameterSyntaxError:
    case YEASTAR_ERRCODE.parameterError:
    case YEASTAR_ERRCODE.duplicateKeyValue:
    case YEASTAR_ERRCODE.fileSizeExceeded:
      return { kind: 'bad-request' };
    case YEASTAR_ERRCODE.accountIpBlocked:
      return { kind: 'ip', fault: 'ys-ip-blocked' };
    case YEASTAR_ERRCODE.ipForbidden:
      return { kind: 'ip', fault: 'ys-ip-forbidden' };
    case YEASTAR_ERRCODE.maxLimitationExceeded:
      // "Error Code and Error Message": "the existing quantity has reached the limit". On a token
      // call it is the 8 valid tokens of *Get Access Token* (a public integration reads it so; the
      // guide names no code for that limit): held, never retried at once (sign-in-guard.ts).
      if (isTokenCall(operation)) return { kind: 'rate-limit', fault: 'ys-token-limit' };
      return { kind: 'bad-request' };
    default:
      // A refusal of get_token the guide does not explain (answered as the PBX answers its errors,
      // not as an HTTP failure): most likely the token limit (section 2 of the doc), held the same
      // way rather than retried as a server fault.
      if (operation === 'get_token' && (httpStatus === undefined || httpStatus < 400))
        return { kind: 'rate-limit', fault: 'ys-token-limit-likely' };
      return undefined;
  }
};

function isTokenCall(operation: string | undefined): boolean {
  return operation === 'get_token' || operation === 'refresh_token';
}

/** Frames larger than this are dropped unparsed, as the standard stream's are. */
export const YEASTAR_MAX_FRAME_CHARS = 64 * 1024;
/** A call lists few members; members past this are not read (a conference of hundreds). */
export const YEASTAR_MAX_MEMBERS = 64;
/** Longest call_id, number or trunk name read; longer ones are refused (caller IDs are cut). */
const MAX_FIELD_CHARS = 256;

export type DecodeReject = 'oversized' | 'not-json' | 'not-object' | 'bad-field';

export type DecodeResult =
  { ok: true; envelopes: EventEnvelope[] } | { ok: false; reason: DecodeReject; detail?: string };

/** member_status ("(30011) Call Status Changed") in the core's words: only RING rings. */
export function coreCallState(memberStatus: string): string {
  switch (memberStatus) {
    case 'RING':
      return 'ringing';
    case 'ALERT':
      return 'calling';
    case 'ANSWER':
    case 'ANSWERED':
      return 'answered';
    case 'HOLD':
      return 'hold';
    case 'BYE':
      return 'ended';
    default: {
      // The list is not promised to be complete; a status we do not know is not a ring.
      const word = memberStatus.toLowerCase();
      return word === 'ringing' || word === '' ? 'unknown' : word;
    }
  }
}

/** Trunk status numbers ("(30010) Trunk Registration Status Changed") in the core's words. */
export function coreTrunkStatus(status: number): string {
  if (status === 1 || status === 2 || status === 3) return 'registered'; // idle, busy, unmonitored
  if (status === 4 || status === 5) return 'registering';
  if (status === 41) return 'registration-failed';
  if (status === 42) return 'unreachable';
  if (status === 43) return 'unavailable';
  if (status === 44) return 'disabled';
  if (status === 0) return 'unknown';
  return `fault-${status}`; // 11-12 FXO, 21-23 E1/BRI, 31-36 GSM failures
}

interface RingMemory {
  /** Channel of the RING we last saw for this extension ('' when the frame had none). */
  channel: string;
  generation: number;
}

interface CallMemory {
  /** Extensions of this call whose last known status was RING. */
  ringing: Map<string, RingMemory>;
  /** Times each extension entered RING (only consulted for frames without channel ids). */
  rings: Map<string, number>;
  /**
   * The call's latest report (a digest of its text) and what it decoded to. The same report again
   * next is a retry of it (the relay answered 503 when storing failed, and the PBX sends it again):
   * it gets the same envelopes, since the memory above already moved on and would no longer say
   * which extensions stopped ringing.
   */
  last?: { digest: string; envelopes: EventEnvelope[] };
}

export interface YeastarDecoderOptions {
  /** Calls remembered at once (FIFO); default 10,000. */
  maxCalls?: number;
  /** How long a call is remembered after its first frame; default 6 hours. */
  callTtlMs?: number;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string (or a finite number, written as one) of 1 to MAX_FIELD_CHARS characters. */
function field(value: unknown, allowEmpty = false): string | undefined {
  const s =
    typeof value === 'string'
      ? value
      : typeof value === 'number' && Number.isFinite(value)
        ? String(value)
        : undefined;
  if (s === undefined || s.length > MAX_FIELD_CHARS) return undefined;
  return s.length > 0 || allowEmpty ? s : undefined;
}

/** A caller ID: any string, cut to MAX_FIELD_CHARS code points (the core flags a cut one). */
function callerId(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return '';
  return value.length <= MAX_FIELD_CHARS
    ? value
    : Array.from(value)
        .slice(0, MAX_FIELD_CHARS + 1)
        .join('');
}

/**
 * What makes two frames the same event: the same PBX (sn), the same call, the same member (its
 * extension number and call channel) in the same status. Two frames asserting that member X of
 * call C is in status S carry one fact; a real change is a new status or a new channel (a new
 * ring leg gets a new channel). Where a PBX sends no channel id, the ring's ordinal within the call
 * stands in for it. The id is a hash, so its length is bounded whatever the fields hold.
 */
export function eventIdOf(parts: readonly (string | number)[]): string {
  return `ys1-${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 40)}`;
}

interface Member {
  kind: 'extension' | 'inbound' | 'outbound';
  info: Json;
  status: string;
}

function membersOf(value: unknown): Member[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: Member[] = [];
  for (const entry of value.slice(0, YEASTAR_MAX_MEMBERS)) {
    if (!isObject(entry)) continue;
    for (const kind of ['extension', 'inbound', 'outbound'] as const) {
      const info = entry[kind];
      if (!isObject(info)) continue;
      const status = field(info.member_status);
      out.push({ kind, info, status: status ?? '' });
    }
  }
  return out;
}

export class YeastarEventDecoder {
  private readonly calls: BoundedFifoMap<CallMemory>;
  private lastStamp = 0;
  /** When each trunk's and extension's current status began (ids of status reports). */
  private readonly statuses = new StatusChanges();

  constructor(options: YeastarDecoderOptions = {}) {
    this.calls = new BoundedFifoMap(
      options.maxCalls ?? 10_000,
      options.callTtlMs ?? 6 * 60 * 60 * 1000,
    );
  }

  /** Calls remembered now (for stats). */
  get callsRemembered(): number {
    return this.calls.size;
  }

  /**
   * One frame's text, received at wall-clock `receivedAt` (ms) and monotonic `nowMonotonic` (the
   * memory's clock). Unknown codes decode to no envelopes.
   */
  decode(text: string, receivedAt: number, nowMonotonic: number): DecodeResult {
    if (text.length > YEASTAR_MAX_FRAME_CHARS) return { ok: false, reason: 'oversized' };
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return { ok: false, reason: 'not-json' };
    }
    if (!isObject(frame)) return { ok: false, reason: 'not-object' };
    const type = frame.type;
    if (typeof type !== 'number' || !Number.isSafeInteger(type))
      return { ok: false, reason: 'bad-field', detail: 'type' };
    const sn = typeof frame.sn === 'string' ? frame.sn.slice(0, MAX_FIELD_CHARS) : '';
    if (
      type !== YEASTAR_EVENT.callState &&
      type !== YEASTAR_EVENT.trunkRegistration &&
      type !== YEASTAR_EVENT.presence
    )
      return { ok: true, envelopes: [] };
    const msg = payloadOf(frame.msg);
    if (!msg) return { ok: false, reason: 'bad-field', detail: 'msg' };
    const stamp = Math.max(Math.round(receivedAt), this.lastStamp + 1);
    this.lastStamp = stamp;
    const base = { timestamp: stamp, tenant: sn, receiptStamped: true as const };
    if (type === YEASTAR_EVENT.callState)
      return this.callState(
        msg,
        sn,
        base,
        nowMonotonic,
        createHash('sha256').update(text).digest('base64'),
      );
    if (type === YEASTAR_EVENT.trunkRegistration) {
      const trunk = field(msg.trunk_name);
      const status = msg.status;
      if (!trunk || typeof status !== 'number' || !Number.isSafeInteger(status))
        return { ok: false, reason: 'bad-field', detail: 'msg' };
      const envelope: EventEnvelope = {
        event: TRUNK_STATUS_CHANGED,
        ...base,
        data: { trunk, status: coreTrunkStatus(status), vendor_status: status },
        // From content: a repeat of the trunk's status is the report that began it (one event,
        // however often it is delivered again); a status that comes back later is a new one.
        event_id: eventIdOf([
          sn,
          type,
          trunk,
          status,
          this.statusSince([sn, type, trunk], String(status), stamp, nowMonotonic),
        ]),
      };
      return { ok: true, envelopes: [envelope] };
    }
    const extension = field(msg.extension);
    const vendor = field(msg.status);
    if (!extension || !vendor) return { ok: false, reason: 'bad-field', detail: 'msg' };
    // The core's word for a lunch break is lunch_break; the other five are the same words.
    const status = vendor === 'lunch' ? 'lunch_break' : vendor;
    return {
      ok: true,
      envelopes: [
        {
          event: PRESENCE_CHANGED,
          ...base,
          data: { extension, presence_status: status },
          event_id: eventIdOf([
            sn,
            type,
            extension,
            vendor,
            this.statusSince([sn, type, extension], vendor, stamp, nowMonotonic),
          ]),
        },
      ],
    };
  }

  private statusSince(
    key: readonly (string | number)[],
    status: string,
    stamp: number,
    nowMonotonic: number,
  ): number {
    return this.statuses.since(key.join('\u0000'), status, stamp, nowMonotonic);
  }

  private callState(
    msg: Json,
    sn: string,
    base: { timestamp: number; tenant: string; receiptStamped: true },
    now: number,
    digest: string,
  ): DecodeResult {
    const callId = field(msg.call_id);
    const members = membersOf(msg.members);
    if (!callId || !members) return { ok: false, reason: 'bad-field', detail: 'msg' };
    const known = this.calls.get(callId, now);
    if (known?.last?.digest === digest) return { ok: true, envelopes: [...known.last.envelopes] };
    const inbound = members.find((m) => m.kind === 'inbound');
    const calling = members.find((m) => m.kind === 'extension' && m.status === 'ALERT');
    const from = inbound
      ? callerId(inbound.info.from)
      : calling
        ? (field(calling.info.number) ?? '')
        : '';
    const line = inbound ? (field(inbound.info.to) ?? field(inbound.info.trunk_name) ?? '') : '';
    const memory: CallMemory = known ?? { ringing: new Map(), rings: new Map() };
    const envelopes: EventEnvelope[] = [];
    const listed = new Set<string>();
    const envelope = (number: string, state: string, id: string, vendor: string) =>
      envelopes.push({
        event: CALL_STATE_CHANGED,
        ...base,
        data: {
          call_id: callId,
          from,
          to: number,
          state,
          ...(line ? { line } : {}),
          member_status: vendor,
        },
        event_id: id,
      });
    for (const member of members) {
      if (member.kind !== 'extension') continue;
      const number = field(member.info.number);
      if (!number || listed.has(number)) continue;
      listed.add(number);
      const channel = field(member.info.channel_id) ?? '';
      const was = memory.ringing.get(number);
      let generation = was?.generation ?? memory.rings.get(number) ?? 0;
      if (member.status === 'RING') {
        // A new ring of this extension (not a repeat of the one we know): without channel ids the
        // ring's ordinal is what tells it apart.
        if (!was || was.channel !== channel) {
          generation = (memory.rings.get(number) ?? 0) + 1;
          memory.rings.set(number, generation);
        }
        memory.ringing.set(number, { channel, generation });
      } else memory.ringing.delete(number);
      const ordinal = channel ? 0 : generation;
      envelope(
        number,
        coreCallState(member.status),
        eventIdOf([sn, callId, number, channel, member.status, ordinal]),
        member.status,
      );
    }
    // Extensions that were ringing and are no longer listed: the call stopped ringing there (a
    // colleague answered the ring group, the queue moved on, the caller hung up).
    for (const [number, ring] of memory.ringing) {
      if (listed.has(number)) continue;
      memory.ringing.delete(number);
      envelope(
        number,
        'ended',
        eventIdOf([sn, callId, number, ring.channel, 'GONE', ring.channel ? 0 : ring.generation]),
        '',
      );
    }
    memory.last = { digest, envelopes: [...envelopes] };
    const over = members.length > 0 && members.every((m) => m.status === 'BYE');
    if (over) this.calls.delete(callId);
    else this.calls.set(callId, memory, now);
    return { ok: true, envelopes };
  }
}

/** `msg`: an object, or a JSON-encoded object in a string. */
function payloadOf(msg: unknown): Json | undefined {
  if (isObject(msg)) return msg;
  if (typeof msg !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(msg);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
