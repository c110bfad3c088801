/**
 * One notification for an unanswered call that went to voicemail (issue 38 follow-up), the one
 * rule for it, between the presenters and the OS notification centre.
 *
 * Such a call used to show two: "Missed call from Ada" (CallPresenter, when it stops ringing) and
 * "Voicemail from Ada, 0:42" (NoticePresenter, when the message is left). The voicemail is kept:
 * it says everything the missed call says (who, on which line, Call back) and more (that there is
 * a message to listen to, and how long), and its click selects the message in History, which is
 * what the user will act on. So a voicemail replaces the missed-call notification of the same call,
 * whichever arrives first: arriving second it closes the missed-call notification; arriving first,
 * the missed-call notification is not shown (and the ring notification it would have replaced is
 * closed). History keeps both the missed call and the voicemail.
 *
 * The same call: the voicemail names the call (Yeastar P-Series names each voicemail by its call's
 * id, src-shared/phone-systems/yeastar-p-series.ts), or, where it does not (the standard service's
 * 30015 carries no call_id, docs/wire-protocol.md section 6), it is from the same caller number
 * (one with digits: two withheld numbers are not the same caller), the call started ringing before
 * the voicemail came, and at most SAME_CALL_MS before it (a greeting and a long message). The line
 * is not compared: a call may ring on the user's DID and extension, and the voicemail names the
 * extension only. A caller who calls twice within that time and leaves one message has one
 * missed-call notification replaced by it; History still lists both calls.
 *
 * Memory: at most MAX_REMEMBERED missed-call and voicemail notifications each, for SAME_CALL_MS.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import { digitsOf } from '../../../src-shared/rules/phone-number-rules.ts';
import type { CallCard } from '../ports/views.ts';
import type { NoticeAlert, Notifier, NotifyOptions } from '../ports/ports.ts';

/** How long after a call started ringing a voicemail from its caller is taken as that call's. */
export const SAME_CALL_MS = 15 * 60_000;
/** Missed-call (and voicemail) notifications remembered for pairing, each. */
export const MAX_REMEMBERED = 200;

/** What pairing needs of a missed call. */
export interface MissedCallFacts {
  callId: string;
  from: string;
  /** When it started ringing (this computer's clock, CallCard.startedAt). */
  startedAt: number;
}

/** What pairing needs of a voicemail. */
export interface VoicemailFacts {
  /** The call it names, where the phone system names one. */
  callId?: string;
  from: string;
  /** When it arrived (this computer's clock). */
  at: number;
}

/** The one rule: is this voicemail the message left on this missed call? */
export function sameCall(call: MissedCallFacts, voicemail: VoicemailFacts): boolean {
  if (voicemail.callId !== undefined && voicemail.callId === call.callId) return true;
  return (
    digitsOf(call.from) !== '' &&
    call.from === voicemail.from &&
    call.startedAt <= voicemail.at &&
    voicemail.at - call.startedAt <= SAME_CALL_MS
  );
}

/**
 * Notifications shown lately, oldest first: at most MAX_REMEMBERED, none older than SAME_CALL_MS.
 * (A short list, looked through in order: BoundedFifoMap has no iteration.)
 */
class Recent<V> {
  private entries: Array<{ id: string; facts: V; at: number }> = [];

  add(id: string, facts: V, now: number): void {
    this.entries = this.entries.filter((e) => e.id !== id && now - e.at <= SAME_CALL_MS);
    this.entries.push({ id, facts, at: now });
    if (this.entries.length > MAX_REMEMBERED) this.entries.shift();
  }

  /** Forgets and returns the oldest one whose facts match, or undefined. */
  take(now: number, matches: (facts: V) => boolean): string | undefined {
    const i = this.entries.findIndex((e) => now - e.at <= SAME_CALL_MS && matches(e.facts));
    if (i < 0) return undefined;
    const [found] = this.entries.splice(i, 1);
    return found?.id;
  }
}

/** A Notifier that shows one notification per call that went to voicemail (see above). */
export class OneNotificationPerCall implements Notifier {
  private readonly inner: Notifier;
  private readonly clock: Clock;
  /** Missed-call notifications shown, by call id. */
  private readonly missed = new Recent<MissedCallFacts>();
  /** Voicemail notifications shown that replaced no missed call (yet), by their History id. */
  private readonly voicemails = new Recent<VoicemailFacts>();

  constructor(inner: Notifier, clock: Clock) {
    this.inner = inner;
    this.clock = clock;
  }

  show(card: CallCard, options: NotifyOptions): void {
    this.inner.show(card, options);
  }

  close(callId: string): void {
    this.inner.close(callId);
  }

  showMissed(card: CallCard, options: NotifyOptions): void {
    const now = this.clock.now();
    const call: MissedCallFacts = {
      callId: card.callId,
      from: card.from,
      startedAt: card.startedAt,
    };
    if (this.voicemails.take(now, (v) => sameCall(call, v)) !== undefined) {
      // Its voicemail is on screen already: the ring notification goes, no missed-call one.
      this.inner.close(card.callId);
      return;
    }
    this.inner.showMissed(card, options);
    this.missed.add(card.callId, call, now);
  }

  showNotice(alert: NoticeAlert, options: NotifyOptions): void {
    const of = alert.voicemailOf;
    if (of) {
      const now = this.clock.now();
      const voicemail: VoicemailFacts = {
        ...(of.callId !== undefined ? { callId: of.callId } : {}),
        from: of.from,
        at: now,
      };
      const missed = this.missed.take(now, (c) => sameCall(c, voicemail));
      if (missed !== undefined) this.inner.close(missed);
      else this.voicemails.add(alert.id, voicemail, now);
    }
    this.inner.showNotice(alert, options);
  }
}
