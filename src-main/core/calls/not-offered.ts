/**
 * The CallControl of a phone system that offers no call actions (the standard service publishes no
 * call API; and any app before a phone system's own implementation is given): nothing is offered,
 * and every action answers "not offered by this phone system" in catalogue words, never throws.
 */
import type { CallControl, CallControlResult } from '../ports/call-control.ts';
import { english, phrase } from '../../../src-shared/i18n/phrase.ts';

const WORDS = [phrase('status.calls-not-offered')];
const NOT_OFFERED: CallControlResult = {
  ok: false,
  refusal: 'not-offered',
  words: WORDS,
  message: english(WORDS),
};
const NOTHING: ReadonlySet<never> = new Set();

export function notOfferedCallControl(): CallControl {
  const refuse = (): Promise<CallControlResult> => Promise.resolve(NOT_OFFERED);
  return {
    offered: () => NOTHING,
    dial: refuse,
    transfer: refuse,
    hangup: refuse,
    answer: refuse,
    decline: refuse,
  };
}
