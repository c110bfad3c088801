/**
 * How a call turned out, in the same words for the popup's cards, the history, the tray and the
 * CSV export: still ringing, answered on one of the user's own numbers, answered by someone else
 * (a colleague, a hunt group), missed (the caller hung up while it rang), or ended some other way
 * (voicemail, the ring timed out). Pure, so the renderer uses it too (it imports only types from
 * src-main/).
 */
import type { MessageId } from '../i18n/catalogue.ts';

export type CallOutcome = 'ringing' | 'answered' | 'answered-elsewhere' | 'missed' | 'ended';

export const CALL_OUTCOMES: readonly CallOutcome[] = [
  'ringing',
  'answered',
  'answered-elsewhere',
  'missed',
  'ended',
];

const OUTCOME_WORDS: Record<CallOutcome, string> = {
  ringing: 'Ringing',
  answered: 'Answered',
  'answered-elsewhere': 'Answered by a colleague',
  missed: 'Missed',
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
