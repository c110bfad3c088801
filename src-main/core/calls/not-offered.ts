/**
 * The CallControl of a phone system that offers no call actions (the standard service publishes no
 * call API; and any app before a phone system's own implementation is given): nothing is offered,
 * and every action answers "not offered by this phone system" in catalogue words, never throws.
 */
import type { CallControl, CallControlResult } from '../ports/call-control.ts';
import { callRefusal } from '../../../src-shared/api/call-api.ts';

const NOT_OFFERED: CallControlResult = callRefusal('not-offered');
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
