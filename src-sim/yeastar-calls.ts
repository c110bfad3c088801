import type { Dispatcher } from './dispatcher.ts';
import type { CallBookLike } from './calls.ts';

/**
 * Calls as Yeastar P-Series reports them ("(30011) Call Status Changed",
 * docs/phone-systems/yeastar-p-series.md section 5): one report per change, listing every member
 * of the call with its status. An outside caller is an `inbound` member (from, to = the DID
 * dialled, trunk_name), a colleague calling is an `extension` member in ALERT; each extension rung
 * is an `extension` member in RING with a channel of its own. The same ring()/setCallState() as
 * the standard CallBook, so the traffic generator, the demo and the control surface drive both:
 *
 * - ring(): one report, the callee extensions in RING.
 * - setCallState(id, 'answered', {to}): that extension ANSWER (the caller ANSWERED), and the
 *   others still ringing leave the call (not listed from then on); 'hold': HOLD;
 *   'ended': BYE in this report, and the member is gone from the next ones (assumption: a report
 *   is a snapshot of the members now). A call whose extensions have all ended sends a last report
 *   with every member BYE, and is forgotten.
 */
export const YEASTAR_CALL_STATE = 30011;

interface Member {
  number: string;
  channel: string;
  status: string;
}

interface Call {
  caller: { kind: 'inbound'; from: string; channel: string; status: string } | Member;
  line: string;
  trunk: string;
  members: Map<string, Member>;
}

const STATUS_FOR: Record<string, string> = {
  ringing: 'RING',
  answered: 'ANSWER',
  hold: 'HOLD',
  ended: 'BYE',
};

export interface YeastarCallOptions {
  /** Numbers that are extensions of this PBX: a call from one of them is internal. */
  isExtension: (number: string) => boolean;
  /** The DID an outside caller dialled, and the trunk it came in on. */
  did?: string;
  trunk?: string;
  /** Wall-clock ms (call ids are Asterisk-like: seconds.sequence). */
  now: () => number;
}

export class YeastarCallBook implements CallBookLike {
  private readonly calls = new Map<string, Call>();
  private readonly dispatcher: Dispatcher;
  private readonly opts: YeastarCallOptions;
  private counter = 0;
  private channels = 0;

  constructor(dispatcher: Dispatcher, instanceId: string, opts: YeastarCallOptions) {
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
    if (!call) {
      const trunk = this.opts.trunk ?? 'SIP-Main';
      call = {
        caller: this.opts.isExtension(opts.from)
          ? { number: opts.from, channel: this.channel(opts.from), status: 'ALERT' }
          : { kind: 'inbound', from: opts.from, channel: this.channel(trunk), status: 'ALERT' },
        line: this.opts.did ?? '5550100',
        trunk,
        members: new Map(),
      };
      this.calls.set(callId, call);
    }
    for (const party of to)
      call.members.set(party, { number: party, channel: this.channel(party), status: 'RING' });
    this.report(callId, call);
    return callId;
  }

  setState(callId: string, state: string, opts: { to?: string } = {}): void {
    if (typeof state !== 'string' || state === '')
      throw new TypeError('state must be a non-empty string');
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    const status = STATUS_FOR[state] ?? state.toUpperCase();
    const targets =
      opts.to !== undefined
        ? [call.members.get(opts.to) ?? this.join(call, opts.to)]
        : [...call.members.values()];
    for (const member of targets) member.status = status;
    if (status === 'ANSWER' || status === 'HOLD') call.caller.status = 'ANSWERED';
    // Answered by one of several rung (a ring group, a queue): the others stop ringing and are
    // not listed from this report on (the doc's section 5, "Answered by a colleague"; the page's
    // fixture constructed-30011-ring-group-answered-by-102.json).
    if (status === 'ANSWER')
      for (const [number, member] of call.members)
        if (member.status === 'RING') call.members.delete(number);
    if ([...call.members.values()].every((m) => m.status === 'BYE')) {
      call.caller.status = 'BYE';
      this.report(callId, call);
      this.calls.delete(callId);
      return;
    }
    this.report(callId, call);
    // An extension that hung up is not listed in the call's later reports.
    for (const [number, member] of call.members)
      if (member.status === 'BYE') call.members.delete(number);
  }

  forget(callId: string): void {
    this.calls.delete(callId);
  }

  activeCalls(): number {
    return this.calls.size;
  }

  private join(call: Call, number: string): Member {
    const member = { number, channel: this.channel(number), status: 'RING' };
    call.members.set(number, member);
    return member;
  }

  private channel(endpoint: string): string {
    return `PJSIP/${endpoint}-${(++this.channels).toString(16).padStart(8, '0')}`;
  }

  private report(callId: string, call: Call): void {
    const member = (m: Member) => ({
      extension: {
        number: m.number,
        channel_id: m.channel,
        member_status: m.status,
        call_path: '',
      },
    });
    const caller =
      'kind' in call.caller
        ? {
            inbound: {
              from: call.caller.from,
              to: call.line,
              trunk_name: call.trunk,
              channel_id: call.caller.channel,
              member_status: call.caller.status,
              call_path: '',
            },
          }
        : member(call.caller);
    this.dispatcher.emit(YEASTAR_CALL_STATE, {
      call_id: callId,
      members: [caller, ...[...call.members.values()].map(member)],
    });
  }
}
