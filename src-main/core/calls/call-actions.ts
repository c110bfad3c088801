/**
 * The app's call actions (issue 38) over the CallControl port: Call back from the popup and
 * History, the dial box, `tel:`/`callto:`/`sip:` links, Transfer, Hang up, Answer and Decline.
 * The renderer sends call ids (never a number for a call it shows: the number comes from main's
 * own popup and History), or the text typed in the dial box; every number goes through the one
 * dial rule (numbers/phone-number.ts `dialableNumber`, with its refusal in words by
 * links/dial-link.ts `dialTarget`) before the phone system sees it. A link from outside dials only
 * after the user's confirmation, unless the organisation's policy dropped it (`needsConfirmation`).
 * Never throws: every refusal is a result with catalogue words.
 */
import type {
  CallAction,
  CallControl,
  CallControlRefusal,
  CallControlResult,
  TransferMode,
  RemoteAnswerOffer,
} from '../ports/call-control.ts';
import type { Colleague } from '../contacts/colleagues.ts';
import type { ConsultationView } from '../ports/views.ts';
import type { Consultations } from './consultations.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import {
  dialTarget,
  needsConfirmation,
  parseDialLink,
  type DialLinkRefusal,
} from '../links/dial-link.ts';

export type CallActionOutcome =
  | { ok: true; callId?: string }
  | {
      ok: false;
      refusal: CallControlRefusal | DialLinkRefusal | 'cancelled' | 'unknown-call';
      words: Words;
    };

export interface CallActionsDeps {
  control: () => CallControl;
  /** The user's default region (Settings), for numbers without a country code. */
  region: () => string | undefined;
  /** The caller's number of a call on the popup, or of a History entry (main's own data). */
  popupNumber: (callId: string) => string | undefined;
  historyNumber: (callId: string) => string | undefined;
  /** false only where the organisation's policy dropped the confirmation of links. */
  confirmDialLinks: () => boolean;
  /**
   * Shows the number a link will dial with Call and Cancel (the confirmation window); true for
   * Call. Without it a link that needs confirmation is never dialled.
   */
  confirm?: (shown: string) => Promise<boolean>;
  /** The colleagues whose name or extension matches what the user typed (Transfer's picker). */
  colleagues?: (query: string) => Colleague[];
  /**
   * Where attended transfers under way are kept (main's, so a reloaded popup still offers
   * Complete and Cancel); absent: none are kept.
   */
  consultations?: Consultations;
  /** The phone system's name for an extension (the directory), for whom a consultation is with. */
  nameOf?: (extension: string) => string | null;
  logger: Logger;
}

/** The actions in a fixed order (the renderer shows buttons in this order). */
const ORDER: readonly CallAction[] = ['dial', 'transfer', 'hangup', 'answer', 'decline'];

export class CallActions {
  private readonly d: CallActionsDeps;
  constructor(deps: CallActionsDeps) {
    this.d = deps;
  }

  /** What the phone system offers now, for the renderer's buttons. */
  offered(): CallAction[] {
    try {
      const set = this.d.control().offered();
      return ORDER.filter((a) => set.has(a));
    } catch (err) {
      this.d.logger.warn('call actions: offered() failed', { error: err });
      return [];
    }
  }

  /**
   * Whether Call back can be offered for `number` (a missed call's or a voicemail's notification):
   * the phone system offers dialling and the number is one the dial rule dials.
   */
  canCallBack(number: string | undefined): boolean {
    if (number === undefined || !this.offers('dial')) return false;
    return dialTarget(number, this.d.region()).ok;
  }

  /** Call back the caller of a call on the popup or in History. */
  callBack(where: 'popup' | 'history', callId: string): Promise<CallActionOutcome> {
    const raw = where === 'popup' ? this.d.popupNumber(callId) : this.d.historyNumber(callId);
    if (raw === undefined) return Promise.resolve(unknownCall());
    return this.dial(raw);
  }

  /** Dials what the user typed or clicked in Screenpop (no confirmation: it is their own click). */
  async dial(text: string): Promise<CallActionOutcome> {
    if (!this.offers('dial')) return notOffered();
    const n = dialTarget(text, this.d.region());
    if (!n.ok) return { ok: false, refusal: n.refusal, words: [n.words] };
    return this.act('dial', (c) => c.dial(n.number));
  }

  /** A link from another program or a web page: read, confirmed (unless policy), then dialled. */
  async openLink(link: string): Promise<CallActionOutcome> {
    const parsed = parseDialLink(link, this.d.region());
    if (!parsed.ok) {
      this.d.logger.info('call link refused', { reason: parsed.refusal });
      return { ok: false, refusal: parsed.refusal, words: [parsed.words] };
    }
    if (!this.offers('dial')) return notOffered();
    if (needsConfirmation('link', this.d.confirmDialLinks())) {
      let yes = false;
      try {
        yes = this.d.confirm ? await this.d.confirm(parsed.shown) : false;
      } catch (err) {
        this.d.logger.warn('call link confirmation failed', { error: err });
      }
      if (!yes)
        return { ok: false, refusal: 'cancelled', words: [phrase('status.dial-cancelled')] };
    }
    return this.act('dial', (c) => c.dial(parsed.number));
  }

  /**
   * Transfer of a call the user answered, to an extension or a number (a colleague picked is their
   * extension): blind (the caller goes at once), or attended (the caller on hold while the user
   * talks to `to`; then Complete or Cancel).
   */
  async transfer(
    callId: string,
    to: string,
    mode: TransferMode = 'blind',
  ): Promise<CallActionOutcome> {
    const n = dialTarget(to, this.d.region());
    if (!n.ok) return { ok: false, refusal: n.refusal, words: [n.words] };
    const r = await this.act('transfer', (c) => c.transfer(callId, n.number, mode));
    if (r.ok && mode === 'attended') this.consulting(callId, n.number);
    // Blind: the caller went; attended again: the new consultation is begun above.
    else this.settled(callId, r, r.ok);
    return r;
  }

  /** An attended transfer's second step: the caller goes to the colleague consulted. */
  async completeTransfer(callId: string): Promise<CallActionOutcome> {
    const r = await this.act('transfer', (c) =>
      c.completeTransfer ? c.completeTransfer(callId) : Promise.resolve(notOfferedResult()),
    );
    this.settled(callId, r, r.ok);
    return r;
  }

  /**
   * An attended transfer's second step: the consultation ends, the user back with the caller.
   * Cancel is the way out of a consultation the phone system no longer has (stale): its own
   * refusal (`refused`: no transfer under way to abort) ends the state too, so the card offers
   * Transfer and Hang up again instead of two buttons that can only be refused. Complete's
   * refusal does not: it may mean "not yet" (the colleague still rings).
   */
  async cancelTransfer(callId: string): Promise<CallActionOutcome> {
    const r = await this.act('transfer', (c) =>
      c.cancelTransfer ? c.cancelTransfer(callId) : Promise.resolve(notOfferedResult()),
    );
    this.settled(callId, r, r.ok || r.refusal === 'refused');
    return r;
  }

  /** The attended transfers under way (main's), oldest first: what the popup shows on load. */
  consultations(): ConsultationView[] {
    return this.d.consultations?.list() ?? [];
  }

  /** Colleagues to transfer to, by name or extension; none where Transfer is not offered. */
  colleagues(query: string): Colleague[] {
    if (!this.d.colleagues || !this.offers('transfer')) return [];
    try {
      return this.d.colleagues(query);
    } catch (err) {
      this.d.logger.warn('call actions: colleagues() failed', { error: err });
      return [];
    }
  }

  /**
   * Whether Answer and Decline are shown on the ringing call `callId` (remote answer, uaCSTA):
   * only where the phone system offers them and this call's desk-phone call is certain now.
   */
  remoteAnswer(callId: string): RemoteAnswerOffer {
    if (!this.offers('answer')) return { offered: false };
    try {
      return this.d.control().remoteAnswer?.(callId) ?? { offered: false };
    } catch (err) {
      this.d.logger.warn('call actions: remoteAnswer() failed', { error: err });
      return { offered: false };
    }
  }

  async hangup(callId: string): Promise<CallActionOutcome> {
    const r = await this.act('hangup', (c) => c.hangup(callId));
    this.settled(callId, r, r.ok);
    return r;
  }
  answer(callId: string): Promise<CallActionOutcome> {
    return this.act('answer', (c) => c.answer(callId));
  }
  decline(callId: string): Promise<CallActionOutcome> {
    return this.act('decline', (c) => c.decline(callId));
  }

  /** An attended transfer's first step was accepted: kept with the phone system's name for `to`. */
  private consulting(callId: string, to: string): void {
    const held = this.d.consultations;
    if (!held) return;
    let name: string | null = null;
    try {
      name = this.d.nameOf?.(to) ?? null;
    } catch (err) {
      this.d.logger.warn('call actions: nameOf() failed', { error: err });
    }
    held.begin(callId, to, name);
  }

  /**
   * After an action on `callId`: its consultation is over when `over` (the action did end it), or
   * when the phone system no longer has the call or the user's part in it (`no-such-call`).
   */
  private settled(callId: string, r: CallActionOutcome, over: boolean): void {
    if (over || (!r.ok && r.refusal === 'no-such-call')) this.d.consultations?.end(callId);
  }

  private offers(action: CallAction): boolean {
    return this.offered().includes(action);
  }

  private async act(
    action: CallAction,
    run: (c: CallControl) => Promise<CallControlResult>,
  ): Promise<CallActionOutcome> {
    if (!this.offers(action)) return notOffered();
    try {
      const r = await run(this.d.control());
      if (r.ok) return r.callId !== undefined ? { ok: true, callId: r.callId } : { ok: true };
      this.d.logger.info('call action refused', { action, refusal: r.refusal });
      return { ok: false, refusal: r.refusal, words: r.words };
    } catch (err) {
      this.d.logger.warn('call action failed', { action, error: err });
      return { ok: false, refusal: 'refused', words: [phrase('status.call-action-failed')] };
    }
  }
}

function unknownCall(): CallActionOutcome {
  return { ok: false, refusal: 'unknown-call', words: [phrase('status.call-unknown')] };
}

function notOfferedResult(): CallControlResult {
  const words = [phrase('status.call.refused.not-offered')];
  return { ok: false, refusal: 'not-offered', words, message: 'not offered' };
}

function notOffered(): CallActionOutcome {
  return { ok: false, refusal: 'not-offered', words: [phrase('status.call.refused.not-offered')] };
}
