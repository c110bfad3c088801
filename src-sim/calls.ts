import type { Dispatcher } from './dispatcher.ts';

/** Call bookkeeping behind ring()/setCallState(): which parties a call rang and their state. */
export const CALL_STATE_CHANGED = 30011;

/** What drives a call book (the standard one here, Yeastar's in yeastar-calls.ts). */
export interface CallBookLike {
  ring(opts: RingOptions): string;
  setState(callId: string, state: string, opts?: { to?: string; device?: number }): void;
  /**
   * A transfer in the same call: blind, `from`'s leg ends and `to` rings; attended, `from` holds
   * the caller while `to` rings.
   */
  transfer(callId: string, opts: { from: string; to: string; attended?: boolean }): void;
  forget(callId: string): void;
  activeCalls(): number;
}

/** What ring() takes (types.ts Simulator.ring). */
export interface RingOptions {
  from: string;
  to: string | string[];
  callId?: string;
  /** Yeastar P-Series: the queue or ring group number the call came through (`call_path`). */
  via?: string;
  /** Yeastar P-Series: devices each extension rung rings at once (desk phone and Linkus: 2). */
  devices?: number;
}

interface Call {
  from: string;
  parties: Map<string, string>;
}

export class CallBook implements CallBookLike {
  private readonly calls = new Map<string, Call>();
  private readonly dispatcher: Dispatcher;
  private readonly instanceId: string;
  private counter = 0;

  constructor(dispatcher: Dispatcher, instanceId: string) {
    this.dispatcher = dispatcher;
    this.instanceId = instanceId;
  }

  /** One 30011 `ringing` per party (`via` and `devices` are Yeastar's: not said here). */
  ring(opts: RingOptions): string {
    const to = Array.isArray(opts.to) ? opts.to : [opts.to];
    if (typeof opts.from !== 'string' || to.length === 0 || !to.every((t) => typeof t === 'string'))
      throw new TypeError('ring needs from (string) and to (string or non-empty string list)');
    const callId = opts.callId ?? `call_${this.instanceId}_${(++this.counter).toString(36)}`;
    let call = this.calls.get(callId);
    if (!call) this.calls.set(callId, (call = { from: opts.from, parties: new Map() }));
    for (const party of to) {
      call.parties.set(party, 'ringing');
      this.send(callId, call.from, party, 'ringing');
    }
    return callId;
  }

  /**
   * One 30011 per party still in the call (every party not yet `ended`), or only for `to`. A call
   * whose parties have all ended is forgotten.
   */
  setState(callId: string, state: string, opts: { to?: string } = {}): void {
    if (typeof state !== 'string' || state === '')
      throw new TypeError('state must be a non-empty string');
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    const targets =
      opts.to !== undefined
        ? [opts.to]
        : [...call.parties].filter(([, s]) => s !== 'ended').map(([p]) => p);
    for (const party of targets) {
      call.parties.set(party, state);
      this.send(callId, call.from, party, state);
    }
    if ([...call.parties.values()].every((s) => s === 'ended')) this.calls.delete(callId);
  }

  /** `from` ended (attended: `hold`), then `to` ringing, for the same call and caller. */
  transfer(callId: string, opts: { from: string; to: string; attended?: boolean }): void {
    const call = this.calls.get(callId);
    if (!call) throw new RangeError(`unknown call: ${callId}`);
    checkTransfer(opts, call.parties.has(opts.from) && call.parties.get(opts.from) !== 'ended');
    const left = opts.attended ? 'hold' : 'ended';
    call.parties.set(opts.from, left);
    this.send(callId, call.from, opts.from, left);
    call.parties.set(opts.to, 'ringing');
    this.send(callId, call.from, opts.to, 'ringing');
  }

  /** Drops a call without sending anything (traffic stopped mid-call). */
  forget(callId: string): void {
    this.calls.delete(callId);
  }

  activeCalls(): number {
    return this.calls.size;
  }

  private send(callId: string, from: string, to: string, state: string): void {
    this.dispatcher.emit(CALL_STATE_CHANGED, { call_id: callId, from, to, state });
  }
}

/** The checks of a transfer, the same for every call book. */
export function checkTransfer(opts: { from: string; to: string }, fromInCall: boolean): void {
  if (typeof opts?.from !== 'string' || typeof opts.to !== 'string' || opts.to === '')
    throw new TypeError('transfer needs from and to (strings)');
  if (opts.from === opts.to) throw new RangeError('transfer to the same extension');
  if (!fromInCall) throw new RangeError(`${opts.from} is not in the call`);
}
