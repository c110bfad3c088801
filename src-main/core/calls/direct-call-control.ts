/**
 * The CallControl of the direct (non-organisation) mode: the phone system's own call API
 * (docs/phone-systems/yeastar-p-series.md section 10) over the connection in force, so over the
 * user's own sign-in and token manager (no token of its own). What it does before asking the PBX:
 *
 * - `offered()` comes from the phone system's dialect (`ApiDialect.calls`): none on the standard
 *   service, which says "not offered by this phone system". Answer and decline (uaCSTA, section
 *   10 "Remote answer") only with "Answer from Screenpop" on, a valid desk phone address, and the
 *   (30020) reports fed to `uacsta`; per call, `remoteAnswer(callId)` says whether that ringing
 *   call's uaCSTA call is certain (uacsta-match.ts), and each press asks again at that moment.
 * - A number is read by the one phone-number module (`dialableNumber`); anything else is refused
 *   as `invalid-number`, with the number (cut, inert) in the words, and never sent.
 * - A dial tells the engine first (`expectOwnDial`), so that the caller-first ring of the user's
 *   own extension is the user's own call, not a pop (events/own-dials.ts), and settles the ticket
 *   with the call id the PBX answered, or as failed.
 * - Transfer and hang-up find the channel in *Query Calls* at the moment of the action: the user's
 *   own live member (hang-up, attended transfer and its completion or cancel) or the other party
 *   (blind transfer). A call the PBX no longer lists, or without a live member of the user's, is
 *   `no-such-call`.
 *
 * Every failure is a result, never a throw: the refusal id and its words (src-shared/api/call-api.ts;
 * its ids are the port's: a refusal that is not one of the port's would not compile here).
 */
import {
  callRefusal,
  callRefusalOf,
  invalidNumberRefusal,
  notConnectedRefusal,
  type AttendedOperation,
  type CallInfo,
  type CallMember,
} from '../../../src-shared/api/call-api.ts';
import { english, phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import { isServiceError } from '../../../src-shared/api/service-errors.ts';
import { parseDeskPhoneAddress } from '../../../src-shared/rules/desk-phone-address.ts';
import type { UacstaCalls, UacstaMatchRefusal } from './uacsta-match.ts';
import type { DeskPhoneAddress } from '../../../src-shared/rules/desk-phone-address.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { wireFor } from '../../../src-shared/wire/index.ts';
import type { Connection } from '../connection/connection.ts';
import { dialableNumber } from '../numbers/phone-number.ts';
import type {
  CallAction,
  CallControl,
  CallControlResult,
  RemoteAnswerOffer,
  TransferMode,
} from '../ports/call-control.ts';
import type { Settings } from '../settings/types.ts';

/** What of the settings the calls use. */
export type CallSettings = Pick<
  Settings,
  | 'phoneSystem'
  | 'extensions'
  | 'defaultRegion'
  | 'connectionMode'
  | 'answerFromDeskPhone'
  | 'deskPhoneAddress'
>;

export interface DirectCallControlDeps {
  /** The connection in force (null while none: not set up, paused, rebuilding). */
  connection: () => Connection | null;
  /** The settings the connection in force runs with (demo mode: the demo's). */
  settings: () => CallSettings;
  logger: Logger;
}

/** What the PBX's call API offers (section 10), and with remote answer set up. */
const API_ACTIONS: ReadonlySet<CallAction> = new Set(['dial', 'transfer', 'hangup']);
const WITH_REMOTE_ANSWER: ReadonlySet<CallAction> = new Set([...API_ACTIONS, 'answer', 'decline']);
const NONE: ReadonlySet<CallAction> = new Set();

/** A member still in the call (not hung up). */
function live(m: CallMember): boolean {
  return m.channelId !== undefined && m.status !== 'BYE';
}

export class DirectCallControl implements CallControl {
  private readonly d: DirectCallControlDeps;
  private readonly logger: Logger;

  constructor(deps: DirectCallControlDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'calls' });
  }

  offered(): ReadonlySet<CallAction> {
    const settings = this.d.settings();
    // Organisation mode holds no PBX secret: its calls go through the relay (another CallControl).
    if (settings.connectionMode === 'organisation') return NONE;
    if (!wireFor(settings.phoneSystem).api.calls) return NONE;
    return this.remoteAnswerSetUp(settings) ? WITH_REMOTE_ANSWER : API_ACTIONS;
  }

  /**
   * Whether Answer and Decline are shown on the ringing call `callId`: only where its uaCSTA call
   * is certain now; otherwise why not, in words (the popup's status line).
   */
  remoteAnswer(callId: string): RemoteAnswerOffer {
    const settings = this.d.settings();
    const set = this.remoteAnswerTable(settings);
    if (!set || !this.offered().has('answer')) return { offered: false };
    const match = set.table.match(callId, settings.extensions, set.phone);
    return match.ok
      ? { offered: true }
      : { offered: false, words: [uncertainPhrase(match.reason)] };
  }

  private remoteAnswerSetUp(settings: CallSettings): boolean {
    return this.remoteAnswerTable(settings) !== undefined;
  }

  /** The connection's uaCSTA table and the user's phone, where remote answer is set up. */
  private remoteAnswerTable(
    settings: CallSettings,
  ): { table: UacstaCalls; phone: DeskPhoneAddress } | undefined {
    if (!settings.answerFromDeskPhone) return undefined;
    const phone = parseDeskPhoneAddress(settings.deskPhoneAddress);
    const table = this.d.connection()?.uacsta;
    return phone && table ? { table, phone } : undefined;
  }

  async dial(number: string): Promise<CallControlResult> {
    const settings = this.d.settings();
    if (!this.offered().has('dial')) return callRefusal('not-offered');
    const target = dialableNumber(number, settings.defaultRegion);
    if (!target) return invalidNumberRefusal(number);
    const caller = settings.extensions[0];
    if (!caller) return callRefusal('refused', undefined, [noExtensionPhrase]);
    const connection = this.d.connection();
    if (!connection?.calls) return notConnectedRefusal();
    const ticket = connection.engine.expectOwnDial?.(target.dial);
    try {
      const { callId } = await connection.calls.dial({ caller, callee: target.dial });
      ticket?.answered(callId);
      this.logger.info('dialled', { callId });
      return { ok: true, callId };
    } catch (error) {
      ticket?.failed();
      return this.refused('dial', error);
    }
  }

  async transfer(callId: string, to: string, mode: TransferMode): Promise<CallControlResult> {
    const settings = this.d.settings();
    if (!this.offered().has('transfer')) return callRefusal('not-offered');
    const target = dialableNumber(to, settings.defaultRegion);
    if (!target) return invalidNumberRefusal(to);
    return this.onCall(callId, async (connection, mine, call) => {
      const other = call.members.find((m) => m !== mine && live(m));
      if (mode === 'blind' && !other) return callRefusal('no-such-call');
      // Blind: the member who is moved (the other party); attended: the one who transfers (us).
      const channelId = mode === 'blind' ? other!.channelId! : mine.channelId!;
      const answer = await connection.calls!.transfer({
        type: mode,
        channelId,
        number: target.dial,
        dialPermission: mine.number,
      });
      return { ok: true, callId: answer.callId ?? callId };
    });
  }

  async hangup(callId: string): Promise<CallControlResult> {
    if (!this.offered().has('hangup')) return callRefusal('not-offered');
    return this.onCall(callId, async (connection, mine) => {
      const answer = await connection.calls!.hangup(mine.channelId!);
      return { ok: true, callId: answer.callId ?? callId };
    });
  }

  /** *Transfer a Call*'s second request, `attended_operate` `complete`, on the user's own channel. */
  completeTransfer(callId: string): Promise<CallControlResult> {
    return this.attendedOperation(callId, 'complete');
  }

  /** *Transfer a Call*'s second request, `attended_operate` `abort`, on the user's own channel. */
  cancelTransfer(callId: string): Promise<CallControlResult> {
    return this.attendedOperation(callId, 'abort');
  }

  private async attendedOperation(
    callId: string,
    operate: AttendedOperation,
  ): Promise<CallControlResult> {
    if (!this.offered().has('transfer')) return callRefusal('not-offered');
    // The member who transfers is the user (section 10: attended, the transferor's channel).
    return this.onCall(callId, async (connection, mine) => {
      const answer = await connection.calls!.transfer({
        type: 'attended',
        channelId: mine.channelId!,
        operate,
      });
      return { ok: true, callId: answer.callId ?? callId };
    });
  }

  answer(callId: string): Promise<CallControlResult> {
    return this.remote(callId, 'accept');
  }

  decline(callId: string): Promise<CallControlResult> {
    return this.remote(callId, 'refuse');
  }

  /** uaCSTA accept/refuse on the uaCSTA call matched to `callId` at this moment, or why not. */
  private async remote(callId: string, operation: 'accept' | 'refuse'): Promise<CallControlResult> {
    const settings = this.d.settings();
    if (!this.offered().has('answer')) return callRefusal('not-offered');
    const connection = this.d.connection();
    const set = this.remoteAnswerTable(settings);
    if (!connection?.calls?.uacsta || !set) return notConnectedRefusal();
    // The match is asked again now: a second call that began ringing since the buttons were
    // shown makes it uncertain, and then nothing is sent.
    const match = set.table.match(callId, settings.extensions, set.phone);
    if (!match.ok) {
      const words: Words = [uncertainPhrase(match.reason)];
      const refusal = match.reason === 'not-ringing' ? 'no-such-call' : 'refused';
      this.logger.info('remote answer not sent', { operation, reason: match.reason });
      return { ok: false, refusal, words, message: english(words) };
    }
    try {
      await connection.calls.uacsta(operation, {
        extension: match.extension,
        uacstaCallId: match.uacstaCallId,
        ipAddress: match.ipAddress,
      });
      this.logger.info('remote answer sent', { operation, callId });
      return { ok: true, callId };
    } catch (error) {
      const refusal = this.refused(`uacsta ${operation}`, error);
      // A parameter error (40001-40004) to a request built from the PBX's own report: the call
      // is gone from the phone, or the phone does not take uaCSTA (section 10).
      if (isServiceError(error) && error.kind === 'bad-request' && !refusal.ok) {
        const words: Words = [...refusal.words, phrase('status.call.uacsta.phone-refused')];
        return { ...refusal, words, message: english(words) };
      }
      return refusal;
    }
  }

  /** Runs `act` on the call as the PBX lists it now, with the user's own live member in it. */
  private async onCall(
    callId: string,
    act: (connection: Connection, mine: CallMember, call: CallInfo) => Promise<CallControlResult>,
  ): Promise<CallControlResult> {
    const connection = this.d.connection();
    if (!connection?.calls) return notConnectedRefusal();
    const own = new Set(this.d.settings().extensions);
    try {
      const calls = await connection.calls.query({ callId });
      const call = calls.find((c) => c.callId === callId);
      const mine = call?.members.find(
        (m) => m.kind === 'extension' && own.has(m.number) && live(m),
      );
      if (!call || !mine) return callRefusal('no-such-call');
      return await act(connection, mine, call);
    } catch (error) {
      return this.refused('call action', error);
    }
  }

  private refused(what: string, error: unknown): CallControlResult {
    const refusal = callRefusalOf(error);
    this.logger.warn(`${what} refused`, { refusal: refusal.refusal, error });
    return refusal;
  }
}

const noExtensionPhrase = phrase('status.call.no-extension');

/** Why Answer and Decline are not offered on a call (uacsta-match.ts), in words. */
function uncertainPhrase(reason: UacstaMatchRefusal) {
  return phrase(`status.call.uacsta.${reason}`);
}
