import type { Dispatcher } from './dispatcher.ts';
import { checkTransfer, type CallBookLike, type RingOptions } from './calls.ts';
import type { Rng } from './rng.ts';

/**
 * Calls as Yeastar P-Series reports them ("(30011) Call Status Changed",
 * docs/phone-systems/yeastar-p-series.md section 5). An outside caller is an `inbound` member
 * (from, to = the DID dialled, trunk_name), a colleague calling is an `extension` member in ALERT;
 * each extension rung is an `extension` member in RING with a channel of its own (two channels
 * when the extension has two devices, a desk phone and Linkus). The same ring()/setCallState() as
 * the standard CallBook, so the traffic generator, the demo and the control surface drive both.
 *
 * Channel ids as captured from a real P570 (test/fixtures/yeastar-p-series/README.md, "Captured"):
 * `PJSIP/<ext>-<8 lowercase hex>` for an extension's leg, `PJSIP/trunk-<trunk>-endpoint-<8 hex>`
 * for the trunk's, one PBX-wide counter.
 *
 * Two report styles (`reportStyle`), chosen per call:
 *
 * - `member` (the default): as the captures show them (`captured-sequences.json`, calls A and B):
 *   the caller alone in ALERT as the call arrives (A1); each leg's RING with the caller beside it,
 *   the extension first (A3: `[ext RING, inbound ALERT]`); an answer the same way (`[ext ANSWER,
 *   inbound ANSWERED]`), a hold likewise; a leg's BYE alone (A7, C8, E4); the caller's own BYE
 *   alone when no extension is left (F1). The caller hanging up while extensions ring is its BYE
 *   beside them (A5: `[ext RING, inbound BYE]`), then each ringing leg's BYE alone (A7), then a
 *   30015 `487 Request Terminated` listing those legs BYE (A8). Not captured, and our choice: a
 *   ring group or queue rings each extension in its own report (each beside the caller), and the
 *   extensions still ringing when a colleague answers get their BYE alone after the answer.
 * - `snapshot` (the doc's earlier reading): one report per change listing every member of the call.
 *   ring(): the caller and the callee legs in RING; an answer: that leg ANSWER (the caller ANSWERED)
 *   and the others still ringing leave the call (not listed from then on); an ended leg is listed
 *   BYE once and not in later reports; the last report has every member BYE.
 * - `mixed`: each call picks one of the two at random (the seeded generator), so a client meets
 *   both shapes on one stream.
 *
 * Call records ("(30012) New CDR", fields and types as captured: `captured-30012-*`, empty text
 * fields `""`, durations as numbers), in either style: one per extension rung, when its last leg
 * ends, so a call gets several, some before its last BYE (captured call C: three records for one
 * call id, two while a leg was still up). Status `ANSWERED` (with its talk time), `NO ANSWER`, or
 * `VOICEMAIL` for the extension whose voicemail took the call (state `voicemail`; not captured: the
 * status is from the page's table). `did_number` is `""` (captured B9 leaves it empty on an inbound
 * call that came in on a DID). The state `failed` is a call the PBX could not complete ("(30015)
 * Call Failed"): a 30015 with a reason and `"members": null` (captured E1), then one BUSY record.
 */
export const YEASTAR_CALL_STATE = 30011;
export const YEASTAR_NEW_CDR = 30012;
export const YEASTAR_CALL_FAILED = 30015;
/** (30020) uaCSTA Call: an extension on a uaCSTA desk phone rings, or is answered/refused by it. */
export const YEASTAR_UACSTA_CALL = 30020;

export type ReportStyle = 'snapshot' | 'member' | 'mixed';
export const REPORT_STYLES: readonly ReportStyle[] = ['snapshot', 'member', 'mixed'];

/** One leg of an extension in the call (an extension with two devices has two). */
interface Leg {
  number: string;
  channel: string;
  status: string;
}

interface Inbound {
  /** An outside caller; or (call/dial) the outside or internal number the PBX calls out to. */
  kind: 'inbound' | 'outbound';
  /** inbound: the caller's number; outbound: the extension that dialled. */
  from: string;
  /** outbound: the number called. */
  to?: string;
  channel: string;
  status: string;
}

/** What the call records need of each extension rung in the call. */
interface Party {
  rungAt: number;
  answeredAt?: number;
}

interface Call {
  style: 'snapshot' | 'member';
  caller: Inbound | Leg;
  line: string;
  trunk: string;
  /** The legs in the call now, in the order they joined. */
  legs: Leg[];
  /** Extensions rung and not yet recorded (their record goes out when their last leg ends). */
  parties: Map<string, Party>;
  /** Extensions whose legs the PBX already reported BYE. */
  left: Set<string>;
  /** The number of the queue or ring group the call came through (`call_path`), or ''. */
  via: string;
  /** Wall-clock ms of the first ring (the failed call's record). */
  startedAt: number;
  firstRung?: string;
  /** An attended transfer under way: `from` holds the caller and consults `to` (call/transfer). */
  consult?: { from: string; to: string };
  /** Reports of this operation, and the records that go out after them. */
  records: Array<Record<string, unknown>>;
}

const STATUS_FOR: Record<string, string> = {
  ringing: 'RING',
  answered: 'ANSWER',
  hold: 'HOLD',
  ended: 'BYE',
};

/** The reason a `failed` call gives (one of the values listed on the 30015 page). */
const FAILED_REASON = 'User Busy';
/** The reason a real PBX gave when the caller hung up while it rang (captured A8, B6). */
const ABANDONED_REASON = '487 Request Terminated';
/** Devices an extension may have in the simulator (a desk phone, Linkus, ...). */
export const MAX_DEVICES = 4;

export interface YeastarCallOptions {
  /** Numbers that are extensions of this PBX: a call from one of them is internal. */
  isExtension: (number: string) => boolean;
  /** How many devices an extension rings at once (1 when not given). */
  devicesOf?: (number: string) => number;
  /** The DID an outside caller dialled, and the trunk it came in on. */
  did?: string;
  trunk?: string;
  /** Wall-clock ms (call ids are Asterisk-like: seconds.sequence). */
  now: () => number;
  /** How the call reports are shaped (above); default 'member'. */
  reportStyle?: ReportStyle;
  /** Picks each call's style in 'mixed'. */
  rng?: Rng;
}

export class YeastarCallBook implements CallBookLike {
  private readonly calls = new Map<string, Call>();
  private readonly dispatcher: Dispatcher;
  private readonly opts: YeastarCallOptions;
  private counter = 0;
  private channels = 0;
  /** Extensions on a uaCSTA desk phone: its `ip_address` (IP and SIP port). */
  private readonly uacstaPhones = new Map<string, string>();
  /** uaCSTA calls ringing: their id (the guide's examples are 3278x) to the call and extension. */
  private readonly uacstaCalls = new Map<
    string,
    { callId: string; extension: string; ip: string }
  >();
  private uacstaCounter = 32786;

  constructor(dispatcher: Dispatcher, instanceId: string, opts: YeastarCallOptions) {
    if (opts.reportStyle !== undefined && !REPORT_STYLES.includes(opts.reportStyle))
      throw new RangeError(`reportStyle must be one of ${REPORT_STYLES.join(', ')}`);
    if (opts.reportStyle === 'mixed' && !opts.rng)
      throw new TypeError("reportStyle 'mixed' needs an rng");
    this.dispatcher = dispatcher;
    this.opts = opts;
    // The sequence starts from the instance's tag, so a restarted simulator (a new instance) never
    // repeats a call id that a client still remembers.
    this.counter = (parseInt(instanceId.slice(0, 5), 16) || 0) * 1000;
  }

  ring(opts: RingOptions): string {
    const to = Array.isArray(opts.to) ? opts.to : [opts.to];
    if (typeof opts.from !== 'string' || to.length === 0 || !to.every((t) => typeof t === 'string'))
      throw new TypeError('ring needs from (string) and to (string or non-empty string list)');
    if (opts.via !== undefined && (typeof opts.via !== 'string' || opts.via.length > 64))
      throw new TypeError('via must be a string (the number of a queue or ring group)');
    if (
      opts.devices !== undefined &&
      !(Number.isInteger(opts.devices) && opts.devices >= 1 && opts.devices <= MAX_DEVICES)
    )
      throw new RangeError(`devices must be an integer from 1 to ${MAX_DEVICES}`);
    // Asterisk-style call ids: seconds.sequence.
    const callId = opts.callId ?? `${Math.floor(this.opts.now() / 1000)}.${++this.counter}`;
    let call = this.calls.get(callId);
    const isNew = !call;
    if (!call) {
      const trunk = this.opts.trunk ?? 'SIP-Main';
      call = {
        style: this.pickStyle(),
        caller: this.opts.isExtension(opts.from)
          ? { number: opts.from, channel: this.channel(opts.from), status: 'ALERT' }
          : {
              kind: 'inbound',
              from: opts.from,
              channel: this.channel(`trunk-${trunk}-endpoint`),
              status: 'ALERT',
            },
        line: this.opts.did ?? '5550100',
        trunk,
        legs: [],
        parties: new Map(),
        left: new Set(),
        via: opts.via ?? '',
        startedAt: this.opts.now(),
        records: [],
      };
      this.calls.set(callId, call);
    } else if (opts.via !== undefined) call.via = opts.via;
    const rung: Leg[] = [];
    for (const party of to) rung.push(...this.join(call, party, opts.devices));
    if (call.style === 'snapshot') this.snapshot(callId, call);
    else {
      // The caller in its own report as it arrives (captured A1), then each ring beside it (A3).
      if (isNew) this.report(callId, call, [call.caller]);
      for (const leg of rung) this.report(callId, call, [leg, call.caller]);
    }
    for (const party of to) this.uacstaStart(callId, party);
    return callId;
  }

  /**
   * Puts `extension` on a uaCSTA desk phone at `ipAddress` (IP and SIP port; null: none). Each ring
   * of it then sends (30020) uaCSTA Call `call_start` with a uaCSTA call id of its own, shaped as
   * the guide's example (doc section 10): no caller, no 30011 call id.
   */
  setUacstaPhone(extension: string, ipAddress: string | null): void {
    if (ipAddress === null) this.uacstaPhones.delete(extension);
    else this.uacstaPhones.set(extension, ipAddress);
  }

  private uacstaStart(callId: string, extension: string): void {
    const ip = this.uacstaPhones.get(extension);
    if (ip === undefined) return;
    const id = String(++this.uacstaCounter);
    this.uacstaCalls.set(id, { callId, extension, ip });
    if (this.uacstaCalls.size > 1000)
      this.uacstaCalls.delete(this.uacstaCalls.keys().next().value!);
    this.uacstaReport('call_start', id);
  }

  private uacstaReport(operation: string, id: string): void {
    const c = this.uacstaCalls.get(id)!;
    this.dispatcher.emit(YEASTAR_UACSTA_CALL, {
      operation,
      extension: c.extension,
      call_id: id,
      ip_address: c.ip,
    });
  }

  /**
   * *uaCSTA - Accept a Call* / *- Refuse a Call*: the uaCSTA call on that extension and phone,
   * answered (the leg ANSWER) or refused (the leg ends), then its 30020 `call_answer` /
   * `call_over`. False where the three fields name no ringing uaCSTA call (the PBX's errcode for
   * it is not published: the routes answer 40002, an assumption).
   */
  uacsta(operation: 'accept' | 'refuse', extension: string, id: string, ip: string): boolean {
    const c = this.uacstaCalls.get(id);
    if (!c || c.extension !== extension || c.ip !== ip) return false;
    const call = this.calls.get(c.callId);
    if (!call || !call.legs.some((l) => l.number === extension && l.status === 'RING'))
      return false;
    if (operation === 'accept') this.setState(c.callId, 'answered', { to: extension });
    else this.setState(c.callId, 'ended', { to: extension });
    this.uacstaReport(operation === 'accept' ? 'call_answer' : 'call_over', id);
    this.uacstaCalls.delete(id);
    return true;
  }

  setState(callId: string, state: string, opts: { to?: string; device?: number } = {}): void {
    if (typeof state !== 'string' || state === '')
      throw new TypeError('state must be a non-empty string');
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    if (state === 'failed') return this.fail(callId, call);
    if (state === 'voicemail') return this.toVoicemail(callId, call, opts.to);
    const status = STATUS_FOR[state] ?? state.toUpperCase();
    // A leg already reported BYE (it stopped ringing when a colleague answered) is not reported
    // again (the traffic and the demo end every party; the PBX said it once).
    if (opts.to !== undefined && !this.legsOf(call, opts.to).length && call.left.has(opts.to))
      return;
    if (status === 'BYE' && opts.to === undefined) return this.endAll(callId, call);
    let targets: Leg[];
    if (opts.to !== undefined) {
      const legs = this.legsOf(call, opts.to);
      if (opts.device !== undefined) {
        const leg = legs[opts.device - 1];
        if (!leg) throw new RangeError(`${opts.to} has no device ${opts.device} in the call`);
        targets = [leg];
      } else if (legs.length === 0) targets = this.join(call, opts.to, 1);
      // One device answers (or holds) for the extension; the other devices stop ringing.
      else targets = status === 'BYE' ? legs : [legs.find((l) => l.status !== 'RING') ?? legs[0]!];
    } else targets = this.firstLegs(call);
    const reports: Array<Array<Inbound | Leg>> = [];
    for (const leg of targets) leg.status = status;
    const callerAnswered =
      (status === 'ANSWER' || status === 'HOLD') && call.caller.status === 'ALERT';
    if (callerAnswered) call.caller.status = 'ANSWERED';
    if (status === 'ANSWER')
      for (const leg of targets) {
        const party = call.parties.get(leg.number);
        if (party && party.answeredAt === undefined) party.answeredAt = this.opts.now();
      }
    // Answered by one of several rung (a ring group, a queue, the other device of the same
    // extension): the others stop ringing.
    const stopped =
      status === 'ANSWER'
        ? call.legs.filter((l) => l.status === 'RING' && !targets.includes(l))
        : [];
    for (const leg of stopped) leg.status = 'BYE';
    // Snapshot: those that stopped ringing are not listed from now on (they left with the answer).
    if (call.style === 'snapshot') call.legs = call.legs.filter((l) => !stopped.includes(l));

    if (call.style === 'member') {
      for (const leg of targets) reports.push(status === 'BYE' ? [leg] : [leg, call.caller]);
      for (const leg of stopped) reports.push([leg]);
    }
    const over = !call.legs.some((l) => l.status !== 'BYE');
    if (over) call.caller.status = 'BYE';
    if (call.style === 'member') {
      if (over) reports.push([call.caller]);
      for (const members of reports) this.report(callId, call, members);
    } else this.snapshot(callId, call);
    this.settle(callId, call, over);
  }

  /**
   * A transfer by the extension `from`, which has the call, to `to`, in the same call id (an
   * assumption: no public capture shows a transfer, doc section 5). Blind: `from`'s leg ends (BYE)
   * and `to` rings. Attended: `from` holds the caller (its leg HOLD) and `to` rings; `to` answers
   * (`setCallState(id, 'answered', {to})`) and `from` hangs up (`'ended', {to: from}`) to complete it.
   */
  transfer(callId: string, opts: { from: string; to: string; attended?: boolean }): void {
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    const held = this.legsOf(call, opts?.from);
    checkTransfer(opts, held.length > 0);
    for (const leg of held) leg.status = opts.attended ? 'HOLD' : 'BYE';
    for (const leg of this.legsOf(call, opts.to)) leg.status = 'BYE';
    const rung = this.join(call, opts.to);
    if (opts.attended) call.consult = { from: opts.from, to: opts.to };
    else delete call.consult;
    if (call.style === 'snapshot') this.snapshot(callId, call);
    else {
      for (const leg of held) this.report(callId, call, opts.attended ? [leg, call.caller] : [leg]);
      for (const leg of rung) this.report(callId, call, [leg, call.caller]);
    }
    this.settle(callId, call, false);
  }

  /**
   * The second request of an attended transfer (*Transfer a Call*, `attended_operate`) on the
   * channel of `from`, the extension that started it. `complete`: `from` leaves (its legs BYE) and
   * the caller stays with the consulted party. `abort`: the consulted party's legs end and `from`
   * talks with the caller again. `threeway` and `swap` are accepted and not played out. False when
   * `from` has no attended transfer under way in the call (the route answers 40002: an
   * assumption, the guide does not say).
   */
  attendedOperate(callId: string, from: string, operate: string): boolean {
    const call = this.calls.get(callId);
    const consult = call?.consult;
    if (!call || !consult || consult.from !== from) return false;
    if (operate === 'threeway' || operate === 'swap') return true;
    if (operate !== 'complete' && operate !== 'abort') return false;
    delete call.consult;
    if (operate === 'complete') this.setState(callId, 'ended', { to: from });
    else {
      if (this.legsOf(call, consult.to).length) this.setState(callId, 'ended', { to: consult.to });
      this.setState(callId, 'answered', { to: from });
    }
    return true;
  }

  /**
   * *Make a Call* (`call/dial`, doc section 10), caller-first: the PBX rings the caller's extension
   * first, reported alone (no inbound member, nobody in ALERT); the far party (an `outbound`
   * member) joins the reports once the caller answers (`setCallState(id, 'answered', {to:
   * caller})`). `beforeAnswer` runs after the id is chosen and before the ring is reported (the
   * API answers in between or after, as the simulator is told).
   */
  dial(caller: string, callee: string): { callId: string; ring: () => void } {
    const callId = `${Math.floor(this.opts.now() / 1000)}.${++this.counter}`;
    const trunk = this.opts.trunk ?? 'SIP-Main';
    const call: Call = {
      style: 'member',
      caller: {
        kind: 'outbound',
        from: caller,
        to: callee,
        channel: this.channel(`trunk-${trunk}-endpoint`),
        status: 'ALERT',
      },
      line: callee,
      trunk,
      legs: [],
      parties: new Map(),
      left: new Set(),
      via: '',
      startedAt: this.opts.now(),
      records: [],
    };
    this.calls.set(callId, call);
    const legs = this.join(call, caller, 1);
    return { callId, ring: () => this.report(callId, call, legs) };
  }

  /** The call and member a channel id names (call/hangup, call/transfer), if it is up. */
  byChannel(channel: string): { callId: string; number: string; extension: boolean } | undefined {
    for (const [callId, call] of this.calls) {
      const leg = call.legs.find((l) => l.channel === channel && l.status !== 'BYE');
      if (leg) return { callId, number: leg.number, extension: true };
      if (call.caller.channel === channel && call.caller.status !== 'BYE')
        return {
          callId,
          number: 'kind' in call.caller ? call.caller.from : call.caller.number,
          extension: !('kind' in call.caller),
        };
    }
    return undefined;
  }

  /** Whether `number` is an extension of this PBX. */
  isExtension(number: string): boolean {
    return this.opts.isExtension(number);
  }

  /** An extension with a live leg in the call, other than `number`. */
  otherExtension(callId: string, number: string): string | undefined {
    return this.calls.get(callId)?.legs.find((l) => l.status !== 'BYE' && l.number !== number)
      ?.number;
  }

  /** *Query Calls* (doc section 10): the calls up, each with its members as 30011 lists them. */
  query(by: {
    callId?: string;
    extension?: string;
    type?: string;
  }): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const [callId, call] of this.calls) {
      if (by.callId !== undefined && callId !== by.callId) continue;
      // `type`: inbound (an outside caller), outbound (call/dial's far party), internal.
      const type = 'kind' in call.caller ? call.caller.kind : 'internal';
      if (by.type !== undefined && type !== by.type) continue;
      const legs = call.legs.filter((l) => l.status !== 'BYE');
      if (by.extension !== undefined && !legs.some((l) => l.number === by.extension)) continue;
      const members = [...legs, ...(call.caller.status === 'BYE' ? [] : [call.caller])];
      // An outbound far party the PBX has not called yet (the caller still rings) is not listed.
      const listed = members.filter(
        (m) => !('kind' in m && m.kind === 'outbound' && legs.every((l) => l.status === 'RING')),
      );
      out.push({ call_id: callId, members: listed.map((m) => this.memberJson(call, m)) });
    }
    return out;
  }

  forget(callId: string): void {
    this.calls.delete(callId);
  }

  activeCalls(): number {
    return this.calls.size;
  }

  private pickStyle(): 'snapshot' | 'member' {
    const style = this.opts.reportStyle ?? 'member';
    if (style !== 'mixed') return style;
    return (this.opts.rng as Rng).next() < 0.5 ? 'snapshot' : 'member';
  }

  private legsOf(call: Call, number: string): Leg[] {
    return call.legs.filter((l) => l.number === number && l.status !== 'BYE');
  }

  /** Each extension in the call, by its first leg still up. */
  private firstLegs(call: Call): Leg[] {
    const seen = new Set<string>();
    const out: Leg[] = [];
    for (const leg of call.legs)
      if (leg.status !== 'BYE' && !seen.has(leg.number)) {
        seen.add(leg.number);
        out.push(leg);
      }
    return out;
  }

  /** `number` rings in the call: one leg per device, each a channel of its own. */
  private join(call: Call, number: string, devices?: number): Leg[] {
    const count = devices ?? Math.min(MAX_DEVICES, Math.max(1, this.opts.devicesOf?.(number) ?? 1));
    const legs: Leg[] = [];
    for (let i = 0; i < count; i++)
      legs.push({ number, channel: this.channel(number), status: 'RING' });
    call.legs.push(...legs);
    call.left.delete(number);
    if (!call.parties.has(number)) call.parties.set(number, { rungAt: this.opts.now() });
    call.firstRung ??= number;
    return legs;
  }

  private channel(endpoint: string): string {
    return `PJSIP/${endpoint}-${(++this.channels).toString(16).padStart(8, '0')}`;
  }

  /**
   * The whole call ends. Unanswered with extensions ringing: the caller hung up (captured A and B:
   * its BYE beside the ringing legs, then each leg's BYE alone, then a 30015 487). Else each leg's
   * BYE alone, the caller's last.
   */
  private endAll(callId: string, call: Call): void {
    const up = call.legs.filter((l) => l.status !== 'BYE');
    const abandoned = call.caller.status === 'ALERT' && up.some((l) => l.status === 'RING');
    for (const leg of up) leg.status = 'BYE';
    call.caller.status = 'BYE';
    if (call.style === 'snapshot') this.snapshot(callId, call);
    else if (abandoned) {
      this.report(callId, call, [...up.map((l) => ({ ...l, status: 'RING' })), call.caller]);
      for (const leg of up) this.report(callId, call, [leg]);
    } else {
      for (const leg of up) this.report(callId, call, [leg]);
      this.report(callId, call, [call.caller]);
    }
    if (abandoned)
      this.dispatcher.emit(YEASTAR_CALL_FAILED, {
        call_id: callId,
        reason: ABANDONED_REASON,
        members: up.map((l) => this.memberJson(call, l)),
      });
    this.settle(callId, call, true);
  }

  /**
   * The call went to the voicemail of `to` (default the first extension rung): every leg stops
   * ringing, the caller leaves a message and hangs up; that extension's record says VOICEMAIL.
   */
  private toVoicemail(callId: string, call: Call, to = call.firstRung): void {
    if (to === undefined || !call.parties.has(to))
      throw new RangeError(`${to ?? 'no extension'} was not rung in the call`);
    const up = call.legs.filter((l) => l.status !== 'BYE');
    for (const leg of up) leg.status = 'BYE';
    call.caller.status = 'BYE';
    if (call.style === 'snapshot') this.snapshot(callId, call);
    else {
      for (const leg of up) this.report(callId, call, [leg]);
      this.report(callId, call, [call.caller]);
    }
    this.settle(callId, call, true, to);
  }

  /**
   * After an operation: extensions with no leg left get their record, legs that ended leave the
   * call, and a call that is over is forgotten.
   */
  private settle(callId: string, call: Call, over: boolean, voicemailOf?: string): void {
    const now = this.opts.now();
    for (const [number, party] of call.parties) {
      if (call.legs.some((l) => l.number === number && l.status !== 'BYE')) continue;
      call.parties.delete(number);
      call.left.add(number);
      const talk =
        party.answeredAt !== undefined
          ? Math.max(0, Math.round((now - party.answeredAt) / 1000))
          : 0;
      this.record(callId, call, {
        to: number,
        startedAt: party.rungAt,
        talk,
        status:
          number === voicemailOf
            ? 'VOICEMAIL'
            : party.answeredAt !== undefined
              ? 'ANSWERED'
              : 'NO ANSWER',
      });
    }
    call.legs = call.legs.filter((l) => l.status !== 'BYE');
    if (over) this.calls.delete(callId);
  }

  /** A failed call: one 30015 with `members: null`, then its record; the call is over. */
  private fail(callId: string, call: Call): void {
    this.dispatcher.emit(YEASTAR_CALL_FAILED, {
      call_id: callId,
      reason: FAILED_REASON,
      members: null,
    });
    this.record(callId, call, {
      to: call.firstRung ?? '',
      startedAt: call.startedAt,
      talk: 0,
      status: 'BUSY',
    });
    this.calls.delete(callId);
  }

  /** One extension's call record ("(30012) New CDR"), its fields as captured (captured-30012-*). */
  private record(
    callId: string,
    call: Call,
    r: { to: string; startedAt: number; talk: number; status: string },
  ): void {
    const inbound = 'kind' in call.caller && call.caller.kind === 'inbound';
    this.dispatcher.emit(YEASTAR_NEW_CDR, {
      call_id: callId,
      // The PBX's local time, without a zone (captured); the simulator's zone is UTC.
      time_start: new Date(r.startedAt).toISOString().slice(0, 19).replace('T', ' '),
      call_from: 'kind' in call.caller ? call.caller.from : call.caller.number,
      call_to: r.to,
      call_duration: Math.max(0, Math.round((this.opts.now() - r.startedAt) / 1000)),
      talk_duration: r.talk,
      src_trunk_name: inbound ? call.trunk : '',
      dst_trunk_name: '',
      pin_code: '',
      status: r.status,
      type: inbound ? 'Inbound' : 'kind' in call.caller ? 'Outbound' : 'Internal',
      recording: '',
      did_number: '',
      agent_ring_time: 0,
    });
  }

  private memberJson(call: Call, m: Inbound | Leg): Record<string, unknown> {
    if ('kind' in m && m.kind === 'outbound')
      return {
        outbound: {
          from: m.from,
          to: m.to ?? '',
          trunk_name: call.trunk,
          channel_id: m.channel,
          member_status: m.status,
          call_path: '',
        },
      };
    if ('kind' in m)
      return {
        inbound: {
          from: m.from,
          to: call.line,
          trunk_name: call.trunk,
          channel_id: m.channel,
          member_status: m.status,
          call_path: '',
        },
      };
    return {
      extension: {
        number: m.number,
        channel_id: m.channel,
        member_status: m.status,
        // Assumption (doc section 9): the number of the queue or ring group the call came through.
        call_path: m === call.caller ? '' : call.via,
      },
    };
  }

  /** Every member of the call, the caller first. */
  private snapshot(callId: string, call: Call): void {
    this.report(callId, call, [call.caller, ...call.legs]);
  }

  private report(callId: string, call: Call, members: Array<Inbound | Leg>): void {
    this.dispatcher.emit(YEASTAR_CALL_STATE, {
      call_id: callId,
      members: members.map((m) => this.memberJson(call, m)),
    });
  }
}
