/**
 * How a call turned out, in the same words for the popup's cards, the history, the tray, the CSV
 * export and the CRM's call log: still ringing, answered on one of the user's own numbers, answered
 * by someone else (a colleague, a hunt group), missed (the caller hung up while it rang), sent to
 * voicemail, declined (the user's phone refused it: Decline, busy), or ended some other way (the
 * ring timed out, the app was paused). The one rule from what the phone system said to the outcome
 * is `callOutcomeOf` below; nothing else decides it. Pure, so the renderer uses it too (it imports
 * only types from src-main/).
 */
import type { MessageId } from '../i18n/catalogue.ts';

export type CallOutcome =
  'ringing' | 'answered' | 'answered-elsewhere' | 'missed' | 'voicemail' | 'declined' | 'ended';

export const CALL_OUTCOMES: readonly CallOutcome[] = [
  'ringing',
  'answered',
  'answered-elsewhere',
  'missed',
  'voicemail',
  'declined',
  'ended',
];

/** Who took the call, as far as the phone system said: the user, someone else, nobody (yet). */
export type CallAnswer = 'here' | 'elsewhere' | null;

/**
 * The state words (30011 `state`, docs/wire-protocol.md section 6: an open list) that end a ring
 * without an answer and say how. The standard service sends `ended`; the Yeastar decoder
 * (src-shared/phone-systems/yeastar-p-series.ts) says a 30012 record's VOICEMAIL as `voicemail`,
 * its BUSY as `busy`, and a 30015 failure of the user's leg with 486 Busy Here or 603 Decline as
 * `declined`.
 */
const VOICEMAIL_STATES: ReadonlySet<string> = new Set(['voicemail']);
const DECLINED_STATES: ReadonlySet<string> = new Set(['declined', 'busy', 'rejected']);

/**
 * THE rule of a call's outcome once it stopped ringing for the user: an answer wins (the user's
 * own beats a colleague's); else the state that ended the ring says voicemail or declined; the
 * caller hanging up (`ended`) while it rang is missed; anything else (`failed`, a ring timed out,
 * the app paused: `timed-out`, `cleared`) ended some other way.
 */
export function callOutcomeOf(answer: CallAnswer, state: string): Exclude<CallOutcome, 'ringing'> {
  if (answer === 'here') return 'answered';
  if (answer === 'elsewhere') return 'answered-elsewhere';
  if (VOICEMAIL_STATES.has(state)) return 'voicemail';
  if (DECLINED_STATES.has(state)) return 'declined';
  return state === 'ended' ? 'missed' : 'ended';
}

/**
 * How much an outcome tells, for merging what arrives later (an answer report after a voicemail
 * record of another leg, an `ended` after an answer): an answer here beats one elsewhere beats
 * voicemail and declined, which beat missed and ended. A later report never makes it say less.
 */
export function outcomeRank(outcome: CallOutcome): number {
  switch (outcome) {
    case 'answered':
      return 4;
    case 'answered-elsewhere':
      return 3;
    case 'voicemail':
    case 'declined':
      return 2;
    case 'ringing':
      return 0;
    default:
      return 1;
  }
}

const OUTCOME_WORDS: Record<CallOutcome, string> = {
  ringing: 'Ringing',
  answered: 'Answered',
  'answered-elsewhere': 'Answered by a colleague',
  missed: 'Missed',
  voicemail: 'Voicemail',
  declined: 'Declined',
  ended: 'Ended',
};

/**
 * A call's outcome in English words, for the CSV export (a data file other programs read, kept in
 * English like the runner's JSON); an unknown value (an older app's file) reads as "Ended". What
 * people read (popup, History, tray) says `outcomeMessageId` in their language.
 */
export function outcomeLabel(outcome: CallOutcome): string {
  return OUTCOME_WORDS[outcome] ?? 'Ended';
}

/** The message id of an outcome's words (common.outcome.*); an unknown value reads as "Ended". */
export function outcomeMessageId(outcome: CallOutcome): MessageId {
  return CALL_OUTCOMES.includes(outcome) ? `common.outcome.${outcome}` : 'common.outcome.ended';
}
