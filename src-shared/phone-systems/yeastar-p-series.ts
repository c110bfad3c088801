/**
 * Yeastar P-Series event frames, decoded into the core's envelopes (src-shared/wire/event-codes.ts).
 * Every fact and every assumption behind this file is in docs/phone-systems/yeastar-p-series.md,
 * with the page of the vendor's developer guide it comes from; read that first.
 *
 * A frame is `{"type":<code>,"sn":"<PBX serial>","msg":<payload>}`, where `msg` is a JSON-encoded
 * string or an object. It carries no event id and no time. This decoder
 * - keeps, per call, a table of legs merged across 30011 (call state) reports: a real PBX lists one
 *   member per report (a snapshot-shaped report of several members is read as those members, one
 *   after another, and decodes to the same envelopes). Each extension leg's report becomes one core
 *   30011 envelope: `to` its number, `state` its status in the core's words (only RING is
 *   `ringing`), `from` the caller (the inbound member's `from` from any report of the call, else
 *   the extension that was calling: ALERT), `line` the number dialled (the inbound `to`, else its
 *   trunk), `call_path` the member's own, on a ring after a colleague answered the caller,
 *   `transferred_by` that colleague, and on a ring in a call where no calling party (an inbound
 *   or outbound member, an extension in ALERT) was ever reported, `caller_unseen: true`;
 * - ends a ring of extension X only on X's own non-ringing status (while another leg of X is up,
 *   X still rings there), another extension's answer, a 30012 call record naming X, a 30015
 *   failure listing X, or the end of the call: every leg BYE, a 30015 failure of the caller or
 *   with `members` null. Missing from a report says nothing;
 * - turns a 30012 record with status VOICEMAIL into the core's voicemail notice (30015);
 * - turns 30010 (trunk registration, numeric status) into the core's 30007 and 30009 (presence)
 *   into the core's 30009;
 * - stamps each frame with the time it was received (strictly increasing per decoder), and makes
 *   each envelope's event_id from what makes two frames the same event (see eventIdOf).
 *
 * Memory (doc section 5, rule 6): two bounded maps, each with a budget of bytes held (every call's
 * estimated bytes, `callBytes`, computed each time it is stored; the oldest calls out past it):
 * - calls going on: at most YEASTAR_MAX_LIVE_CALLS (2,000), 6 hours each, YEASTAR_LIVE_BYTES;
 * - calls that ended (tombstones: no legs; the caller, the line, the ring counts and the last
 *   report's envelopes, for a retry and a late report): at most YEASTAR_MAX_ENDED_CALLS (4,000),
 *   YEASTAR_ENDED_TTL_MS (2 minutes) each, YEASTAR_ENDED_BYTES.
 * Each call holds at most YEASTAR_MAX_LEGS (64) legs (ended legs out first, then the oldest) and 64
 * extensions' ring counts. Measured worst case (every call 64 legs of 256-character fields, both
 * maps full): see YEASTAR_LIVE_BYTES.
 *
 * Used by the app on the direct stream and by the relay on the vendor's webhooks, so both derive
 * the same ids for the same member state (a ring carried by both is popped once). It never throws:
 * a frame that does not fit comes back with a reason, as the standard envelope parser's do.
 */
import { createHash } from 'node:crypto';
import { BoundedFifoMap } from '../kit/bounded-map.ts';
import { StatusChanges } from './status-changes.ts';
import {
  CALL_RECORD,
  CALL_STATE_CHANGED,
  PRESENCE_CHANGED,
  TRUNK_STATUS_CHANGED,
  VOICEMAIL_RECEIVED,
  type EventEnvelope,
} from '../wire/event-codes.ts';
// A type only: this module needs no words (the relay's webhook intake loads it).
import type { ErrcodeReader } from '../api/service-errors.ts';

/** The vendor's event codes we read ("API Events Overview", event pages "(300xx) ..."). */
export const YEASTAR_EVENT = {
  extensionRegistration: 30007,
  extensionCallState: 30008,
  presence: 30009,
  trunkRegistration: 30010,
  callState: 30011,
  callRecord: 30012,
  callFailed: 30015,
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
export const yeastarErrcodes: ErrcodeReader = (errcode, { operation, httpStatus } = {}) => {
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

/**
 * Legs of one call remembered (past it an ended leg goes first, else the oldest): a call lists few
 * members (YEASTAR_MAX_MEMBERS).
 */
export const YEASTAR_MAX_LEGS = 64;

/**
 * Calls going on remembered at once. The sizing rule: the concurrent calls of the PBX (a
 * P-Series' `cc_capacity`, *Query PBX capacity*, is bought per PBX; no edition publishes a
 * ceiling we found), taken as at most 1,000, twice for calls whose end report was lost (they stay
 * until YEASTAR_CALL_TTL_MS or until 2,000 newer calls push them out, oldest first).
 */
export const YEASTAR_MAX_LIVE_CALLS = 2_000;
/**
 * How long a call going on is remembered from its first report: twice the PBX's default Max Call
 * Duration of 10,800 s (*System Preferences*, administrator guide), at which the PBX ends a call.
 */
export const YEASTAR_CALL_TTL_MS = 6 * 60 * 60 * 1000;
/**
 * How long an ended call is remembered: a report of the call can still come, a retry of a webhook
 * delivery (5 s timeout, 3 retries: *Query Webhook Event Push Settings*, doc section 6), a leg's
 * BYE or a 30012 record reported just after the end (captured: seconds). Two minutes covers both.
 */
export const YEASTAR_ENDED_TTL_MS = 2 * 60 * 1000;
/**
 * Ended calls remembered at once: those ending within YEASTAR_ENDED_TTL_MS at 100,000 calls an
 * hour (the tenant the app's call memory is sized for, call-tracker.ts): 3,333, rounded up.
 */
export const YEASTAR_MAX_ENDED_CALLS = 4_000;
/**
 * Bytes (as `callBytes` estimates them) held by the calls going on; the oldest go past it. With
 * YEASTAR_ENDED_BYTES it bounds a decoder, the app's and each tenant's in the relay, at 32 MiB
 * of estimate whatever the PBX sends; the estimate stays above the heap: measured with both maps
 * full of the largest calls the wire allows, 20.6 MiB of heap (20.8 with non-Latin-1 text), and
 * 2,000 typical calls going on 4.6 MiB (`npm run bench:yeastar-memory`, doc section 5 rule 6).
 * A typical call weighs ~3 KB, so the budget holds the 2,000 calls of YEASTAR_MAX_LIVE_CALLS
 * several times over; only calls of dozens of legs with long fields meet it.
 */
export const YEASTAR_LIVE_BYTES = 24 * 1024 * 1024;
/** Bytes (as `callBytes` estimates them) held by the ended calls; the oldest go past it. */
export const YEASTAR_ENDED_BYTES = 8 * 1024 * 1024;

/** One leg of a call: a member, by its channel (else its kind and number), as last reported. */
interface Leg {
  kind: Member['kind'];
  number: string;
  channel: string;
  status: string;
  /** The ring ordinal of this extension in the call when this leg last rang (ids without channel). */
  generation: number;
  /** The member's own `call_path`, as last reported non-empty. */
  callPath: string;
}

interface CallMemory {
  /** The call's legs merged across reports (doc section 5), at most YEASTAR_MAX_LEGS. */
  legs: Map<string, Leg>;
  /** Rings each extension has had in this call (their ordinal stands in for a missing channel). */
  rings: Map<string, number>;
  /** The caller, from the inbound member (any report), else the extension that was ALERT. */
  caller?: string;
  callerFromInbound: boolean;
  /** The number dialled (the inbound `to`, else its trunk), from any report of the call. */
  line?: string;
  /** Extensions that answered (ANSWER) the call, in order, each once, at most YEASTAR_MAX_LEGS. */
  answered: string[];
  /** The call ended (every leg BYE, a 30012 record, a 30015 failure). */
  over: boolean;
  /**
   * A calling party was reported in this call: an inbound or outbound member, or an extension
   * calling (ALERT). A ring without one is an outside call on a trunk whose Call Status Monitor is
   * off (doc section 6, set-up checks).
   */
  partySeen: boolean;
  /**
   * The call's latest report (a digest of its text) and what it decoded to. The same report again
   * next is a retry of it (the relay answered 503 when storing failed, and the PBX sends it again):
   * it gets the same envelopes, since the memory above already moved on.
   */
  last?: { digest: string; envelopes: EventEnvelope[] };
}

export interface YeastarDecoderOptions {
  /** Calls going on remembered at once (FIFO); default YEASTAR_MAX_LIVE_CALLS. */
  maxCalls?: number;
  /** How long a call is remembered after its first frame; default YEASTAR_CALL_TTL_MS. */
  callTtlMs?: number;
  /** Bytes held by calls going on; default YEASTAR_LIVE_BYTES. */
  liveBytes?: number;
  /** Ended calls remembered at once; default YEASTAR_MAX_ENDED_CALLS. */
  maxEndedCalls?: number;
  /** Bytes held by ended calls; default YEASTAR_ENDED_BYTES. */
  endedBytes?: number;
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
  /** Calls going on, by call id. */
  private readonly live: BoundedFifoMap<CallMemory>;
  /** Calls that ended, by call id, for YEASTAR_ENDED_TTL_MS (no legs). */
  private readonly ended: BoundedFifoMap<CallMemory>;
  private lastStamp = 0;
  /** When each trunk's and extension's current status began (ids of status reports). */
  private readonly statuses = new StatusChanges();

  constructor(options: YeastarDecoderOptions = {}) {
    this.live = new BoundedFifoMap(
      options.maxCalls ?? YEASTAR_MAX_LIVE_CALLS,
      options.callTtlMs ?? YEASTAR_CALL_TTL_MS,
      options.liveBytes ?? YEASTAR_LIVE_BYTES,
    );
    this.ended = new BoundedFifoMap(
      options.maxEndedCalls ?? YEASTAR_MAX_ENDED_CALLS,
      YEASTAR_ENDED_TTL_MS,
      options.endedBytes ?? YEASTAR_ENDED_BYTES,
    );
  }

  /** Calls remembered now, going on and ended (for stats). */
  get callsRemembered(): number {
    return this.live.size + this.ended.size;
  }

  /**
   * Bytes the calls remembered hold now, as `callBytes` estimates them: at most
   * YEASTAR_LIVE_BYTES + YEASTAR_ENDED_BYTES (or the options').
   */
  get heldBytes(): number {
    return this.live.totalWeight + this.ended.totalWeight;
  }

  /**
   * The call id of a call report (30011, 30012, 30015), else undefined: what a shared call memory
   * (the relay's, on Redis) loads before `decode` and stores after it.
   */
  static callIdOf(text: string): string | undefined {
    if (text.length > YEASTAR_MAX_FRAME_CHARS) return undefined;
    try {
      const frame: unknown = JSON.parse(text);
      if (!isObject(frame)) return undefined;
      const t = frame.type;
      if (
        t !== YEASTAR_EVENT.callState &&
        t !== YEASTAR_EVENT.callRecord &&
        t !== YEASTAR_EVENT.callFailed
      )
        return undefined;
      const msg = payloadOf(frame.msg);
      return msg ? field(msg.call_id) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * One call's memory as text (what `importCall` takes back) and whether the call ended, or null
   * when none is remembered. The
   * text holds facts only (legs, ring counts, caller, line, answers, the last report's digest and
   * envelopes): the decision stays in `decode`.
   */
  exportCall(callId: string, now: number): { text: string; over: boolean } | null {
    const call = this.live.get(callId, now) ?? this.ended.get(callId, now);
    if (!call) return null;
    const text = JSON.stringify({ ...call, legs: [...call.legs], rings: [...call.rings] });
    return { text, over: call.over };
  }

  /**
   * Replaces this decoder's memory of one call with `text` from `exportCall` (null: none). Text
   * that does not read as one is taken as no memory (never throws).
   */
  importCall(callId: string, text: string | null, now: number): void {
    this.live.delete(callId);
    this.ended.delete(callId);
    if (text === null) return;
    let call: CallMemory;
    try {
      const o = JSON.parse(text) as CallMemory & {
        legs: [string, Leg][];
        rings: [string, number][];
      };
      if (!Array.isArray(o.legs) || !Array.isArray(o.rings) || !Array.isArray(o.answered)) return;
      call = {
        ...o,
        legs: new Map(o.legs.slice(0, YEASTAR_MAX_LEGS)),
        rings: new Map(o.rings.slice(0, YEASTAR_MAX_LEGS)),
        answered: o.answered.slice(0, YEASTAR_MAX_LEGS),
      };
    } catch {
      return;
    }
    (call.over ? this.ended : this.live).set(callId, call, now, callBytes(callId, call));
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
    const isCall =
      type === YEASTAR_EVENT.callState ||
      type === YEASTAR_EVENT.callRecord ||
      type === YEASTAR_EVENT.callFailed;
    if (!isCall && type !== YEASTAR_EVENT.trunkRegistration && type !== YEASTAR_EVENT.presence)
      return { ok: true, envelopes: [] };
    const msg = payloadOf(frame.msg);
    if (!msg) return { ok: false, reason: 'bad-field', detail: 'msg' };
    const stamp = Math.max(Math.round(receivedAt), this.lastStamp + 1);
    this.lastStamp = stamp;
    const base = { timestamp: stamp, tenant: sn, receiptStamped: true as const };
    if (isCall)
      return this.callState(
        type,
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
    type: number,
    msg: Json,
    sn: string,
    base: { timestamp: number; tenant: string; receiptStamped: true },
    now: number,
    digest: string,
  ): DecodeResult {
    const callId = field(msg.call_id);
    if (!callId) return { ok: false, reason: 'bad-field', detail: 'msg' };
    const members = membersOf(msg.members);
    // A 30015 failure may list no members ("members":null, captured); a 30012 record has none.
    if (!members && type === YEASTAR_EVENT.callState)
      return { ok: false, reason: 'bad-field', detail: 'msg' };
    const known = this.live.get(callId, now) ?? this.ended.get(callId, now);
    if (known?.last?.digest === digest) return { ok: true, envelopes: [...known.last.envelopes] };
    if (!known && type !== YEASTAR_EVENT.callState) {
      // The end of a call we never saw ringing: nothing rings to end; a voicemail is still news.
      return { ok: true, envelopes: this.record(type, msg, callId, sn, base, undefined) };
    }
    const call: CallMemory = known ?? {
      legs: new Map(),
      rings: new Map(),
      callerFromInbound: false,
      answered: [],
      over: false,
      partySeen: false,
    };
    const envelopes: EventEnvelope[] = [];
    const emit = (
      number: string,
      state: string,
      id: string,
      vendor: string,
      extra: Record<string, string | true> = {},
    ) =>
      envelopes.push({
        event: CALL_STATE_CHANGED,
        ...base,
        data: {
          call_id: callId,
          from: call.caller ?? '',
          to: number,
          state,
          ...(call.line ? { line: call.line } : {}),
          member_status: vendor,
          ...extra,
        },
        event_id: id,
      });
    if (type === YEASTAR_EVENT.callState) {
      // The caller and the line first, from the whole report: a snapshot may list the caller after
      // the extensions it rings; reported one member at a time, the caller came in an earlier one.
      for (const m of members ?? []) this.learnCaller(call, m);
      for (const m of members ?? []) {
        this.mergeLeg(call, m, sn, callId, emit);
        if (!call.over && this.callIsOver(call)) this.endCall(call, sn, callId, emit);
      }
    } else if (type === YEASTAR_EVENT.callFailed && members && members.length > 0) {
      // A failure that lists members: the caller's failure (an inbound member listed, 487 when the
      // caller gave up) ends the call; else it ends the rings of the extensions it lists (486
      // Busy Here of one member), as the call may go on elsewhere.
      // A member's 486 Busy Here or 603 Decline is its phone refusing the call (a phone's Decline
      // key answers 486 or 603, as the phone is set up): the ring ends as `declined`.
      if (members.some((m) => m.kind === 'inbound')) this.endCall(call, sn, callId, emit);
      else this.endRingsOf(call, sn, callId, emit, numbersOf(members), failureState(msg.reason));
    } else if (type === YEASTAR_EVENT.callFailed) {
      this.endCall(call, sn, callId, emit); // "members": null: the call failed as a whole
    } else {
      // A call record ends the rings of the extensions it names, the callee's in the record's
      // words (a voicemail, busy...). Not the whole call: one call id may get several records, one
      // per segment, while the call goes on (captured, doc section 5).
      const to = field(msg.call_to);
      const from = field(msg.call_from);
      if (to)
        this.endRingsOf(call, sn, callId, emit, new Set([to]), recordState(field(msg.status)));
      if (from) this.endRingsOf(call, sn, callId, emit, new Set([from]));
      envelopes.push(...this.record(type, msg, callId, sn, base, call));
    }
    call.last = { digest, envelopes: [...envelopes] };
    // An ended call moves to the short-lived map (its legs were dropped); one rung again, back.
    const [into, from] = call.over ? [this.ended, this.live] : [this.live, this.ended];
    from.delete(callId);
    into.set(callId, call, now, callBytes(callId, call));
    return { ok: true, envelopes };
  }

  /** The caller and the line a member tells, kept for the whole call. */
  private learnCaller(call: CallMemory, m: Member): void {
    if (m.kind !== 'extension' || m.status === 'ALERT') call.partySeen = true;
    if (m.kind === 'inbound') {
      const from = callerId(m.info.from);
      if (!call.callerFromInbound && (from || call.caller === undefined)) {
        call.caller = from;
        call.callerFromInbound = from !== '';
      }
      call.line ??= field(m.info.to) ?? field(m.info.trunk_name);
    } else if (m.kind === 'extension' && m.status === 'ALERT' && call.caller === undefined) {
      const number = field(m.info.number);
      if (number) call.caller = number;
    }
  }

  /** One member's report folded into the call's legs, and the envelope it makes (if any). */
  private mergeLeg(call: CallMemory, m: Member, sn: string, callId: string, emit: Emit): void {
    const number = m.kind === 'extension' ? field(m.info.number) : undefined;
    const key = legKey(m);
    if (!key) return;
    if (call.over && m.status === 'RING') call.over = false; // rung again after all: not over
    const channel = field(m.info.channel_id) ?? '';
    const path = field(m.info.call_path) ?? '';
    const was = call.legs.get(key);
    const leg: Leg = was ?? {
      kind: m.kind,
      number: number ?? '',
      channel,
      status: '',
      generation: 0,
      callPath: '',
    };
    const newRing = m.status === 'RING' && was?.status !== 'RING';
    if (newRing && number) {
      leg.generation = (call.rings.get(number) ?? 0) + 1;
      setBounded(call.rings, number, leg.generation);
    } else if (!was && number) leg.generation = call.rings.get(number) ?? 0;
    leg.status = m.status;
    if (path) leg.callPath = path;
    if (!was) addLeg(call.legs, key, leg);
    if (!number) return;
    if (m.status === 'ANSWER' && number !== call.caller) {
      const i = call.answered.indexOf(number);
      if (i >= 0) call.answered.splice(i, 1);
      call.answered.push(number);
      if (call.answered.length > YEASTAR_MAX_LEGS) call.answered.shift();
    }
    const extra: Record<string, string | true> = {};
    if (leg.callPath) extra.call_path = leg.callPath;
    // No caller was ever reported in this call: an outside call on a trunk whose Call Status
    // Monitor is off (doc section 6). The card says so, with the remedy.
    if (m.status === 'RING' && !call.partySeen) extra.caller_unseen = true;
    if (m.status === 'RING') {
      // Rung after a colleague answered the same caller: a transfer (blind or attended).
      const by =
        call.caller !== undefined ? call.answered.findLast((n) => n !== number) : undefined;
      if (by !== undefined) extra.transferred_by = by;
    } else if (!ANSWERED.has(m.status) && this.stillLive(call, number, key)) {
      // One leg of an extension that has another one still up (desk phone and Linkus): the
      // extension has not stopped ringing, or talking, there.
      return;
    }
    emit(
      number,
      coreCallState(m.status),
      eventIdOf([sn, callId, number, channel, m.status, channel ? 0 : leg.generation]),
      m.status,
      extra,
    );
    // Taken here: the call stops ringing at every other extension (a ring group or a queue
    // cancels the others). Said to each of them after the answer, since the relay routes an
    // event by its `to`: a colleague's answer alone would not reach my desktop through it.
    if (m.status === 'ANSWER' && number !== call.caller)
      this.endRings(call, sn, callId, emit, number);
  }

  /** Has extension `number` a leg other than `except` that is not BYE? */
  private stillLive(call: CallMemory, number: string, except: string): boolean {
    for (const [key, leg] of call.legs)
      if (
        key !== except &&
        leg.kind === 'extension' &&
        leg.number === number &&
        leg.status !== 'BYE'
      )
        return true;
    return false;
  }

  /** The call is over when every leg it has had (since the last end) is BYE. */
  private callIsOver(call: CallMemory): boolean {
    if (call.legs.size === 0) return false;
    for (const leg of call.legs.values()) if (leg.status !== 'BYE') return false;
    return true;
  }

  /**
   * The end of the call: each extension with a leg still ringing gets `ended` (the same id whatever
   * ended it), then the legs are dropped. The caller and the line are kept until the call ages out
   * of the map, so a leg reported after the end still names the caller.
   */
  private endCall(call: CallMemory, sn: string, callId: string, emit: Emit): void {
    this.endRings(call, sn, callId, emit);
    call.legs.clear();
    call.over = true;
  }

  /**
   * Each extension (but `except`) with a leg still ringing gets one `ended`, the same id whatever
   * ended it (the call's end, a colleague's answer); its ringing legs count as BYE from then on.
   */
  private endRings(
    call: CallMemory,
    sn: string,
    callId: string,
    emit: Emit,
    except?: string,
  ): void {
    this.endRingsWhere(call, sn, callId, emit, (n) => n !== except);
  }

  /** The rings of the extensions in `numbers` end (as endRings); the call, if no leg is left. */
  private endRingsOf(
    call: CallMemory,
    sn: string,
    callId: string,
    emit: Emit,
    numbers: ReadonlySet<string>,
    state = 'ended',
  ): void {
    this.endRingsWhere(call, sn, callId, emit, (n) => numbers.has(n), state);
    if (!call.over && this.callIsOver(call)) this.endCall(call, sn, callId, emit);
  }

  private endRingsWhere(
    call: CallMemory,
    sn: string,
    callId: string,
    emit: Emit,
    which: (number: string) => boolean,
    state = 'ended',
  ): void {
    const ringing = new Map<string, Leg>();
    for (const leg of call.legs.values())
      if (leg.kind === 'extension' && leg.status === 'RING' && which(leg.number)) {
        ringing.set(leg.number, leg);
        leg.status = 'BYE';
      }
    for (const [number, leg] of ringing)
      emit(
        number,
        state,
        eventIdOf([sn, callId, number, leg.channel, 'GONE', leg.channel ? 0 : leg.generation]),
        '',
        leg.callPath ? { call_path: leg.callPath } : {},
      );
  }

  /**
   * What a 30012 record says beyond the rings it ends: the core's call record (the callee, status
   * and times, for History), and a voicemail left (status VOICEMAIL).
   */
  private record(
    type: number,
    msg: Json,
    callId: string,
    sn: string,
    base: { timestamp: number; tenant: string; receiptStamped: true },
    call: CallMemory | undefined,
  ): EventEnvelope[] {
    if (type !== YEASTAR_EVENT.callRecord) return [];
    const extension = field(msg.call_to);
    if (!extension) return [];
    const status = field(msg.status) ?? '';
    const talk = seconds(msg.talk_duration);
    const duration = seconds(msg.call_duration);
    // Who made the call, and the record's `type` (captured: Inbound, Outbound, Internal): an
    // Outbound record of one of the user's extensions is a call the user dialled (the call log).
    const caller = field(msg.call_from);
    const direction = field(msg.type)?.toLowerCase();
    const record: EventEnvelope = {
      event: CALL_RECORD,
      ...base,
      data: {
        call_id: callId,
        to: extension,
        ...(caller !== undefined ? { from: caller } : {}),
        ...(direction === 'inbound' || direction === 'outbound' || direction === 'internal'
          ? { direction }
          : {}),
        status,
        ...(talk !== undefined ? { talk_sec: talk } : {}),
        ...(duration !== undefined ? { duration_sec: duration } : {}),
      },
      // One call may get several records (one per segment): each is its own fact.
      event_id: eventIdOf([
        sn,
        type,
        callId,
        extension,
        field(msg.call_from) ?? '',
        field(msg.time_start) ?? '',
        status,
      ]),
    };
    if (status !== 'VOICEMAIL') return [record];
    const from = call?.caller ?? callerId(msg.call_from);
    return [
      record,
      {
        event: VOICEMAIL_RECEIVED,
        ...base,
        data: {
          // One voicemail per call record: the call's id names it (hashed when too long for one).
          voicemail_id: callId.length <= 128 ? callId : eventIdOf([callId]),
          extension,
          from,
        },
        event_id: eventIdOf([sn, type, callId, 'VOICEMAIL']),
      },
    ];
  }
}

type Emit = (
  number: string,
  state: string,
  id: string,
  vendor: string,
  extra?: Record<string, string | true>,
) => void;

/** A 30015 failure's `reason` for the members it lists: `declined` for 486 and 603, else `ended`. */
function failureState(reason: unknown): string {
  return typeof reason === 'string' && /^(486|603)\b/.test(reason.trim()) ? 'declined' : 'ended';
}

/** Statuses that say the extension took the call: they are reported even while another leg rings. */
const ANSWERED = new Set(['ANSWER', 'ANSWERED', 'HOLD']);

/**
 * How a call record's `status` ends a ring it names, in the core's words: the outcome the record
 * says (a voicemail, busy, answered on a leg whose report was lost), `ended` when it is a plain no
 * answer or a status we do not know.
 */
export function recordState(status: string | undefined): string {
  switch (status) {
    case 'ANSWERED':
    case 'ANSWERD': // as the guide's table spells it
      return 'answered';
    case 'VOICEMAIL':
      return 'voicemail';
    case 'BUSY':
      return 'busy';
    case 'FAILED':
      return 'failed';
    default:
      return 'ended';
  }
}

/** A number of seconds from 0 to a day (a number, or digits in a string as older guides print). */
function seconds(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 86_400 ? n : undefined;
}

/** The extension numbers among `members`. */
function numbersOf(members: readonly Member[]): Set<string> {
  const out = new Set<string>();
  for (const m of members) {
    const n = m.kind === 'extension' ? field(m.info.number) : undefined;
    if (n) out.add(n);
  }
  return out;
}

/** A leg's key: its channel, else its kind and number (a member with neither is not a leg). */
function legKey(m: Member): string | undefined {
  const channel = field(m.info.channel_id);
  if (channel) return `c:${channel}`;
  const number = m.kind === 'extension' ? field(m.info.number) : (field(m.info.from, true) ?? '');
  return number === undefined ? undefined : `${m.kind}:${number}`;
}

/** `legs` with `key` added; past YEASTAR_MAX_LEGS the oldest ended (BYE) leg goes, else the oldest. */
function addLeg(legs: Map<string, Leg>, key: string, leg: Leg): void {
  legs.set(key, leg);
  if (legs.size <= YEASTAR_MAX_LEGS) return;
  let out: string | undefined;
  for (const [k, l] of legs)
    if (l.status === 'BYE' && k !== key) {
      out = k;
      break;
    }
  legs.delete(out ?? (legs.keys().next().value as string));
}

/**
 * Fixed costs in a call's estimate, in bytes of V8 heap (objects, Map entries, string headers, the
 * map slots of the call id), fitted to the measurement in doc section 5 rule 6 so that the
 * estimate stays above the heap measured; text counts as V8 holds it (textBytes).
 */
const CALL_BYTES = 800;
const LEG_BYTES = 200;
const RING_BYTES = 60;
const ENVELOPE_BYTES = 400;

/**
 * A call's estimated bytes, computed each time it is stored: its fixed parts, its legs, ring
 * counts and answers, and the envelopes of its last report. A call-state envelope's text fields
 * are the call's own strings (its caller, line, leg numbers and paths), counted once with the
 * call while it has legs; a record's and a voicemail's are read from the record, so they count.
 */
function callBytes(callId: string, call: CallMemory): number {
  let bytes = CALL_BYTES + 2 * textBytes(callId) + textBytes(call.caller) + textBytes(call.line);
  for (const leg of call.legs.values())
    bytes += LEG_BYTES + textBytes(leg.number) + textBytes(leg.channel) + textBytes(leg.callPath);
  for (const number of call.rings.keys()) bytes += RING_BYTES + textBytes(number);
  bytes += 8 * call.answered.length;
  for (const envelope of call.last?.envelopes ?? []) {
    bytes += ENVELOPE_BYTES + textBytes(envelope.event_id);
    // Its strings are the legs' while the call has legs; a tombstone's envelopes hold them alone.
    if (envelope.event !== CALL_STATE_CHANGED || call.legs.size === 0)
      for (const value of Object.values(envelope.data))
        if (typeof value === 'string') bytes += textBytes(value);
  }
  return bytes;
}

/** A string's bytes in V8: one a character for Latin-1 text, two for any other. */
function textBytes(text: string | undefined): number {
  if (text === undefined) return 0;
  return NOT_LATIN1.test(text) ? 2 * text.length : text.length;
}
const NOT_LATIN1 = /[\u0100-\uffff]/;

/** `map` with `key` set, its oldest entry out past YEASTAR_MAX_LEGS. */
function setBounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > YEASTAR_MAX_LEGS) map.delete(map.keys().next().value as string);
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
