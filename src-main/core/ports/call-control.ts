/**
 * Acting on calls (issue 38): what the phone system lets the user do from Screenpop, and the one
 * interface the popup, History, the tray's dial box, `tel:` links and the runner's `dial` command
 * call. Implemented in the core per way of reaching the phone system (the PBX's own API with the
 * user's sign-in, or the relay in organisation mode); tests implement it with plain objects.
 * Types only: the renderer compiles against the views below through the IPC contract.
 */
import type { Words } from '../../../src-shared/i18n/phrase.ts';
import type { CallRefusalId } from '../../../src-shared/api/call-api.ts';

/** What can be done; a phone system that offers none of them says "not offered by this phone system". */
export type CallAction = 'dial' | 'transfer' | 'hangup' | 'answer' | 'decline';

/**
 * Why an action was not done, a stable id (the runner's JSON, tests); `words` say it to people.
 * The one list is src-shared/api/call-api.ts's CALL_REFUSALS (the relay answers the same ids).
 */
export type CallControlRefusal = CallRefusalId;

export type CallControlResult =
  | { ok: true; /** The phone system's id of the call it started or acted on. */ callId?: string }
  | { ok: false; refusal: CallControlRefusal; words: Words; message: string };

export type TransferMode = 'blind' | 'attended';

/**
 * Whether Answer and Decline are shown on one ringing call (remote answer, uaCSTA): only where the
 * phone system's uaCSTA call for it is certain; `words` say why not, where there is something to
 * say (set up, but this call's match is not certain).
 */
export interface RemoteAnswerOffer {
  offered: boolean;
  words?: Words;
}

export interface CallControl {
  /** The actions offered now (by the phone system, the user's settings and the phone). */
  offered(): ReadonlySet<CallAction>;
  /** Calls `number` from the user's own extension (caller-first: the user's phone rings first). */
  dial(number: string): Promise<CallControlResult>;
  /** Transfers a call the user answered to `to` (an extension or a number). */
  transfer(callId: string, to: string, mode: TransferMode): Promise<CallControlResult>;
  hangup(callId: string): Promise<CallControlResult>;
  /**
   * The second step of an attended transfer the user started (`transfer(callId, to, 'attended')`:
   * the caller on hold while the user consults `to`). Complete: the caller goes to the consulted
   * party and the user leaves the call. Cancel: the consultation ends and the user is back with
   * the caller. Offered with 'transfer' (the direct mode's and the relay's both carry them);
   * optional so that a plain test object need not: the app treats a missing one as `not-offered`.
   */
  completeTransfer?(callId: string): Promise<CallControlResult>;
  cancelTransfer?(callId: string): Promise<CallControlResult>;
  /** Per ringing call: Answer and Decline shown or not, and why not (absent: never offered). */
  remoteAnswer?(callId: string): RemoteAnswerOffer;
  /** Remote answer/decline on the user's own desk phone (uaCSTA); off unless set up. */
  answer(callId: string): Promise<CallControlResult>;
  decline(callId: string): Promise<CallControlResult>;
}
