/**
 * Which calls the user's app logs into the CRM (issue 39): the one rule, for the tray app's call
 * log and the runner's. `callLogCalls` is a setting an administrator's policy may preset and lock:
 * 'answered' logs the calls the user answered; 'answered-and-missed' also the ones that rang here
 * and nobody took (missed, voicemail, declined); 'none' logs nothing. A call a colleague answered
 * is never logged by the user's app: the colleague's app logs it (it is theirs), so a ring group's
 * call is logged once, not once per agent it rang.
 */
import type { CallOutcome } from '../ui/call-outcome.ts';

export type CallLogCalls = 'answered' | 'answered-and-missed' | 'none';
export const CALL_LOG_CALLS: readonly CallLogCalls[] = ['answered', 'answered-and-missed', 'none'];

/** Outcomes of a call that rang here and that nobody took. */
const NOT_TAKEN: ReadonlySet<CallOutcome> = new Set(['missed', 'voicemail', 'declined']);

export function shouldLogCall(calls: CallLogCalls, outcome: CallOutcome): boolean {
  if (calls === 'none') return false;
  if (outcome === 'answered') return true;
  return calls === 'answered-and-missed' && NOT_TAKEN.has(outcome);
}

/** The agent's note: plain text, at most this many characters (the IPC check and the core's). */
export const MAX_CALL_NOTE_CHARS = 2000;
/** The outcome choices the note card offers: at most this many, each at most this long. */
export const MAX_CALL_LOG_CHOICES = 12;
export const MAX_CALL_LOG_CHOICE_CHARS = 40;
