import type { Dispatcher } from './dispatcher.ts';
import type { Envelope } from './types.ts';
import type { PhoneSystem } from '../src-shared/phone-systems/names.ts';

/**
 * The rest of the event catalogue (docs/wire-protocol.md section 6): voicemail (30015), inbound
 * SMS (30031), trunk status (30007) and presence (30009), with the payloads the service sends.
 * Ids are generated unless given (a test replays one by giving the same id). Arguments are checked
 * as the service would produce them; a test that wants a payload the service never sends uses
 * emit() or emitRaw().
 */
export const TRUNK_STATUS_CHANGED = 30007;
export const PRESENCE_CHANGED = 30009;
export const VOICEMAIL_RECEIVED = 30015;
export const SMS_RECEIVED = 30031;
/** The service sends at most this many characters of SMS text. */
export const MAX_SMS_TEXT = 1600;

export interface VoicemailOptions {
  extension: string;
  from: string;
  /** Absent: no caller_name field (the protocol allows absent or empty). */
  callerName?: string;
  durationSec: number;
  voicemailId?: string;
}

export interface SmsOptions {
  from: string;
  to: string;
  text: string;
  messageId?: string;
  /** ms since the epoch; default now. */
  receivedAt?: number;
}

function need(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw new TypeError(`${name} must be a non-empty string`);
  return value;
}

/** Yeastar P-Series' events for trunks and presence (docs/phone-systems/yeastar-p-series.md). */
export const YEASTAR_TRUNK_REGISTRATION = 30010;
export const YEASTAR_PRESENCE = 30009;

/**
 * A trunk status as Yeastar's number ("(30010) Trunk Registration Status Changed"): the standard
 * words the control surface takes, or the number itself.
 */
function yeastarTrunkStatus(status: string): number {
  if (/^\d{1,3}$/.test(status)) return Number(status);
  const known: Record<string, number> = {
    registered: 1,
    busy: 2,
    registering: 4,
    unregistered: 41,
    unreachable: 42,
    unavailable: 43,
    disabled: 44,
  };
  const n = known[status];
  if (n === undefined)
    throw new RangeError(`unknown trunk status for this phone system: ${status}`);
  return n;
}

export class NoticeBook {
  private readonly dispatcher: Dispatcher;
  private readonly instanceId: string;
  private readonly now: () => number;
  private readonly yeastar: boolean;
  private counter = 0;

  constructor(
    dispatcher: Dispatcher,
    instanceId: string,
    now: () => number,
    phoneSystem: PhoneSystem = 'standard',
  ) {
    this.dispatcher = dispatcher;
    this.instanceId = instanceId;
    this.now = now;
    this.yeastar = phoneSystem === 'yeastar-p-series';
  }

  /** Yeastar P-Series publishes no voicemail or SMS events: asking for one is a mistake. */
  private offered(what: string): void {
    if (this.yeastar)
      throw new RangeError(`${what} is not offered by this phone system (Yeastar P-Series)`);
  }

  voicemail(opts: VoicemailOptions): Envelope {
    this.offered('voicemail');
    const sec = opts.durationSec;
    if (!Number.isInteger(sec) || sec < 0)
      throw new RangeError('durationSec must be a non-negative integer');
    if (opts.callerName !== undefined && typeof opts.callerName !== 'string')
      throw new TypeError('callerName must be a string');
    return this.dispatcher.emit(VOICEMAIL_RECEIVED, {
      voicemail_id: opts.voicemailId ?? this.id('vm'),
      extension: need(opts.extension, 'extension'),
      from: need(opts.from, 'from'),
      ...(opts.callerName !== undefined ? { caller_name: opts.callerName } : {}),
      duration_sec: sec,
    });
  }

  sms(opts: SmsOptions): Envelope {
    this.offered('SMS');
    if (typeof opts.text !== 'string') throw new TypeError('text must be a string');
    if (Array.from(opts.text).length > MAX_SMS_TEXT)
      throw new RangeError(`text must be at most ${MAX_SMS_TEXT} characters`);
    return this.dispatcher.emit(SMS_RECEIVED, {
      message_id: opts.messageId ?? this.id('msg'),
      from: need(opts.from, 'from'),
      to: need(opts.to, 'to'),
      text: opts.text,
      received_at: opts.receivedAt ?? Math.floor(this.now()),
    });
  }

  trunkStatus(trunk: string, status: string): Envelope {
    if (this.yeastar)
      return this.dispatcher.emit(YEASTAR_TRUNK_REGISTRATION, {
        trunk_name: need(trunk, 'trunk'),
        kind: 'PJSIP',
        status: yeastarTrunkStatus(need(status, 'status')),
        registered_ip: '192.0.2.10:5060',
      });
    return this.dispatcher.emit(TRUNK_STATUS_CHANGED, {
      trunk: need(trunk, 'trunk'),
      status: need(status, 'status'),
    });
  }

  presence(extension: string, status: string): Envelope {
    if (this.yeastar)
      return this.dispatcher.emit(YEASTAR_PRESENCE, {
        extension: need(extension, 'extension'),
        // The guide's word for a lunch break is "lunch".
        status: status === 'lunch_break' ? 'lunch' : need(status, 'status'),
      });
    return this.dispatcher.emit(PRESENCE_CHANGED, {
      extension: need(extension, 'extension'),
      presence_status: need(status, 'status'),
    });
  }

  private id(prefix: string): string {
    return `${prefix}_${this.instanceId}_${(++this.counter).toString(36)}`;
  }
}
