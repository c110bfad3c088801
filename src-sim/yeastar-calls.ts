import type { Dispatcher } from './dispatcher.ts';
import { checkTransfer, type CallBookLike } from './calls.ts';
import type { Rng } from './rng.ts';

/**
 * Calls as Yeastar P-Series reports them ("(30011) Call Status Changed",
 * docs/phone-systems/yeastar-p-series.md section 5). An outside caller is an `inbound` member
 * (from, to = the DID dialled, trunk_name), a colleague calling is an `extension` member in ALERT;
 * each extension rung is an `extension` member in RING with a channel of its own. The same
 * ring()/setCallState() as the standard CallBook, so the traffic generator, the demo and the
 * control surface drive both. Two report styles (`reportStyle`), chosen per call:
 *
 * - `snapshot` (the default; the doc's section 5 assumption): one report per change listing every
 *   member of the call with its status. ring(): the caller and the callee extensions in RING.
 *   setCallState(id, 'answered', {to}): that extension ANSWER (the caller ANSWERED), and the others
 *   still ringing leave the call (not listed from then on); 'hold': HOLD; 'ended': BYE in this
 *   report, and the member is gone from the next ones. A call whose extensions have all ended
 *   sends a last report with every member BYE.
 * - `member`: as real PBXs were captured sending them (issue 32 item 1: public integrations' captures
 *   carry one member per report, e.g. `{"call_id":"1702285525.16","members":[{"extension":
 *   {"number":"703",...,"member_status":"ANSWERED","call_path":""}}]}`, and an inbound member's BYE
 *   alone): one report per member change, each listing only that member. A new call: the caller
 *   alone (ALERT), then each extension's RING alone. An answer: the answering extension's ANSWER
 *   alone, the caller's ANSWERED alone, then each other extension still ringing its BYE alone
 *   (a ring group or queue stops ringing the others). The end: each member's BYE alone, the
 *   caller's last.
 * - `mixed`: each call picks one of the two at random (the seeded generator), so a client meets
 *   both shapes on one stream.
 *
 * Either style, the end of every call is followed by a "(30012) New CDR" record (fields from that
 * page: help.yeastar.com/en/p-series-software-edition/developer-guide/event-new-cdr.html). The state
 * `failed` is a call the PBX could not complete ("(30015) Call Failed", event-call-failed.html): a
 * 30015 report with a reason and `"members": null` (as captured from real PBXs, issue 32 item 1; the
 * page itself lists members), then the CDR (status BUSY), and the call is forgotten.
 */
export const YEASTAR_CALL_STATE = 30011;
export const YEASTAR_NEW_CDR = 30012;
export const YEASTAR_CALL_FAILED = 30015;

export type ReportStyle = 'snapshot' | 'member' | 'mixed';
export const REPORT_STYLES: readonly ReportStyle[] = ['snapshot', 'member', 'mixed'];

interface Member {
  number: string;
  channel: string;
  status: string;
}

interface Inbound {
  kind: 'inbound';
  from: string;
  channel: string;
  status: string;
}

interface Call {
  style: 'snapshot' | 'member';
  caller: Inbound | Member;
  line: string;
  trunk: string;
  members: Map<string, Member>;
  /** Extensions whose leg the PBX already reported BYE (member style). */
  left: Set<string>;
  /** Wall-clock ms: the first ring, the first answer (for the CDR's durations). */
  startedAt: number;
  answeredAt?: number;
  /** The first extension rung, and the one that answered first (the CDR's call_to). */
  firstRung?: string;
  answeredBy?: string;
}

const STATUS_FOR: Record<string, string> = {
  ringing: 'RING',
  answered: 'ANSWER',
  hold: 'HOLD',
  ended: 'BYE',
};

/** The reason a `failed` call gives (one of the values listed on the 30015 page). */
const FAILED_REASON = 'User Busy';

export interface YeastarCallOptions {
  /** Numbers that are extensions of this PBX: a call from one of them is internal. */
  isExtension: (number: string) => boolean;
  /** The DID an outside caller dialled, and the trunk it came in on. */
  did?: string;
  trunk?: string;
  /** Wall-clock ms (call ids are Asterisk-like: seconds.sequence). */
  now: () => number;
  /** How the call reports are shaped (above); default 'snapshot'. */
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

  ring(opts: { from: string; to: string | string[]; callId?: string }): string {
    const to = Array.isArray(opts.to) ? opts.to : [opts.to];
    if (typeof opts.from !== 'string' || to.length === 0 || !to.every((t) => typeof t === 'string'))
      throw new TypeError('ring needs from (string) and to (string or non-empty string list)');
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
          : { kind: 'inbound', from: opts.from, channel: this.channel(trunk), status: 'ALERT' },
        line: this.opts.did ?? '5550100',
        trunk,
        members: new Map(),
        left: new Set(),
        startedAt: this.opts.now(),
      };
      this.calls.set(callId, call);
    }
    const rung: Member[] = [];
    for (const party of to) {
      const member = { number: party, channel: this.channel(party), status: 'RING' };
      call.members.set(party, member);
      call.left.delete(party);
      rung.push(member);
      call.firstRung ??= party;
    }
    if (call.style === 'snapshot') this.snapshot(callId, call);
    else {
      // The caller in its own report before the first ring (a real PBX reports the inbound leg as
      // it arrives), then each ring alone.
      if (isNew) this.reportOne(callId, call, call.caller);
      for (const member of rung) this.reportOne(callId, call, member);
    }
    return callId;
  }

  setState(callId: string, state: string, opts: { to?: string } = {}): void {
    if (typeof state !== 'string' || state === '')
      throw new TypeError('state must be a non-empty string');
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    if (state === 'failed') {
      this.fail(callId, call);
      return;
    }
    const status = STATUS_FOR[state] ?? state.toUpperCase();
    // Member style: a leg already reported BYE (it stopped ringing when a colleague answered) is
    // not reported again (the traffic and the demo end every party; the PBX said it once).
    if (
      call.style === 'member' &&
      opts.to !== undefined &&
      !call.members.has(opts.to) &&
      call.left.has(opts.to)
    )
      return;
    const targets =
      opts.to !== undefined
        ? [call.members.get(opts.to) ?? this.join(call, opts.to)]
        : [...call.members.values()];
    for (const member of targets) member.status = status;
    const callerAnswered =
      (status === 'ANSWER' || status === 'HOLD') && call.caller.status !== 'ANSWERED';
    if (callerAnswered) call.caller.status = 'ANSWERED';
    if (status === 'ANSWER' && call.answeredAt === undefined) {
      call.answeredAt = this.opts.now();
      call.answeredBy = targets[0]?.number;
    }
    // Answered by one of several rung (a ring group, a queue): the others stop ringing and leave
    // the call (the doc's section 5, "Answered by a colleague"; the fixture
    // constructed-30011-ring-group-answered-by-102.json).
    const stopped =
      status === 'ANSWER' ? [...call.members.values()].filter((m) => m.status === 'RING') : [];
    for (const member of stopped) call.members.delete(member.number);
    const over = [...call.members.values()].every((m) => m.status === 'BYE');

    if (call.style === 'snapshot') {
      // Those that stopped ringing are simply not listed; one that hung up is listed BYE once.
      if (over) call.caller.status = 'BYE';
      this.snapshot(callId, call);
    } else {
      for (const member of targets) this.reportOne(callId, call, member);
      if (callerAnswered) this.reportOne(callId, call, call.caller);
      for (const member of stopped) {
        member.status = 'BYE';
        this.reportOne(callId, call, member);
      }
      if (over) {
        call.caller.status = 'BYE';
        this.reportOne(callId, call, call.caller);
      }
    }
    // An extension that hung up is not part of the call from now on.
    for (const [number, member] of call.members)
      if (member.status === 'BYE') {
        call.members.delete(number);
        call.left.add(number);
      }
    for (const member of stopped) call.left.add(member.number);
    if (over) this.finish(callId, call, call.answeredAt !== undefined ? 'ANSWERED' : 'NO ANSWER');
  }

  /**
   * A blind transfer: the extension `from` hangs up its leg (BYE) and `to` rings (RING, a new
   * channel) in the same call, with the same caller. Snapshot: one report with both; member: the
   * BYE alone, then the RING alone.
   */
  transfer(callId: string, opts: { from: string; to: string }): void {
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    const leg = call.members.get(opts?.from);
    checkTransfer(opts, leg !== undefined);
    (leg as Member).status = 'BYE';
    call.members.delete(opts.to);
    const ring = { number: opts.to, channel: this.channel(opts.to), status: 'RING' };
    call.members.set(opts.to, ring);
    call.left.delete(opts.to);
    if (call.style === 'snapshot') this.snapshot(callId, call);
    else {
      this.reportOne(callId, call, leg as Member);
      this.reportOne(callId, call, ring);
    }
    call.members.delete(opts.from);
    call.left.add(opts.from);
  }

  forget(callId: string): void {
    this.calls.delete(callId);
  }

  activeCalls(): number {
    return this.calls.size;
  }

  private pickStyle(): 'snapshot' | 'member' {
    const style = this.opts.reportStyle ?? 'snapshot';
    if (style !== 'mixed') return style;
    return (this.opts.rng as Rng).next() < 0.5 ? 'snapshot' : 'member';
  }

  private join(call: Call, number: string): Member {
    const member = { number, channel: this.channel(number), status: 'RING' };
    call.members.set(number, member);
    return member;
  }

  private channel(endpoint: string): string {
    return `PJSIP/${endpoint}-${(++this.channels).toString(16).padStart(8, '0')}`;
  }

  /** A failed call: one 30015 with `members: null`, then its CDR; the call is over. */
  private fail(callId: string, call: Call): void {
    this.dispatcher.emit(YEASTAR_CALL_FAILED, {
      call_id: callId,
      reason: FAILED_REASON,
      members: null,
    });
    this.finish(callId, call, 'BUSY');
  }

  /** The call's CDR ("(30012) New CDR"), and the call is forgotten. */
  private finish(callId: string, call: Call, status: 'ANSWERED' | 'NO ANSWER' | 'BUSY'): void {
    const now = this.opts.now();
    const inbound = 'kind' in call.caller;
    // The page's example writes an empty text field as one space; we do the same, so a client
    // meets that shape.
    const none = ' ';
    this.dispatcher.emit(YEASTAR_NEW_CDR, {
      call_id: callId,
      // Assumption: the PBX's local time; the simulator's zone is UTC.
      time_start: new Date(call.startedAt).toISOString().slice(0, 19).replace('T', ' '),
      call_from: 'kind' in call.caller ? call.caller.from : call.caller.number,
      call_to: call.answeredBy ?? call.firstRung ?? none,
      call_duration: Math.max(0, Math.round((now - call.startedAt) / 1000)),
      talk_duration:
        call.answeredAt !== undefined ? Math.max(0, Math.round((now - call.answeredAt) / 1000)) : 0,
      src_trunk_name: inbound ? call.trunk : none,
      dst_trunk_name: none,
      pin_code: none,
      status,
      // The page lists internal/inbound/outbound; its example says "Internal".
      type: inbound ? 'Inbound' : 'Internal',
      recording: '',
      did_number: inbound ? call.line : none,
      agent_ring_time: 0,
    });
    this.calls.delete(callId);
  }

  private memberJson(call: Call, m: Inbound | Member): Record<string, unknown> {
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
        call_path: '',
      },
    };
  }

  /** Every member of the call, the caller first. */
  private snapshot(callId: string, call: Call): void {
    this.dispatcher.emit(YEASTAR_CALL_STATE, {
      call_id: callId,
      members: [call.caller, ...call.members.values()].map((m) => this.memberJson(call, m)),
    });
  }

  /** One member alone. */
  private reportOne(callId: string, call: Call, member: Inbound | Member): void {
    this.dispatcher.emit(YEASTAR_CALL_STATE, {
      call_id: callId,
      members: [this.memberJson(call, member)],
    });
  }
}
