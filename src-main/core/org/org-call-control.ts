/**
 * Organisation mode's CallControl as the app uses it (issue 38 item 5): the desktop holds no
 * secret of the phone system, so its calls go through the relay (`POST /v1/calls/<tenant>`,
 * docs/relay-protocol.md 2.5) over the organisation connection's `relayCalls` (relay-call-control.ts:
 * the wire, with the session's credential), and the relay acts on the signed-in user's own
 * extensions only. What this adds, as the direct mode does it:
 *
 * - Numbers are read by the one phone-number module (`dialableNumber`); anything else is
 *   `invalid-number` and never sent. Call ids not shaped like one are `no-such-call`, unsent.
 * - A dial tells the engine first (`expectOwnDial`) so its caller-first ring is the user's own
 *   call, not a pop, and settles the ticket with the call id the relay answered, or as failed.
 * - Once the relay says `not-offered` (no gateway for the tenant), nothing is offered on that
 *   connection any more (the popup and History hide the buttons).
 * - An attended transfer's Complete and Cancel go the same way (`complete-transfer`,
 *   `cancel-transfer`), offered with Transfer.
 * - Refusals are in the direct mode's catalogue words (`status.call.refused.*`).
 */
import {
  callRefusal,
  invalidNumberRefusal,
  isCallId,
  notConnectedRefusal,
} from '../../../src-shared/api/call-api.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { Connection } from '../connection/connection.ts';
import { dialableNumber } from '../numbers/phone-number.ts';
import type {
  CallAction,
  CallControl,
  CallControlResult,
  TransferMode,
} from '../ports/call-control.ts';
import type { CallSettings } from '../calls/direct-call-control.ts';

export interface OrgCallControlDeps {
  /**
   * The connection in force (null while none); an organisation connection carries `relayCalls`,
   * the wire to the relay's `/v1/calls` (relay-call-control.ts) with its sign-in.
   */
  connection: () => (Connection & { relayCalls?: CallControl }) | null;
  settings: () => CallSettings;
  logger: Logger;
}

const RELAY_ACTIONS: ReadonlySet<CallAction> = new Set(['dial', 'transfer', 'hangup']);
const NONE: ReadonlySet<CallAction> = new Set();

export class OrgCallControl implements CallControl {
  private readonly d: OrgCallControlDeps;
  private readonly logger: Logger;
  /** Connections whose relay said it offers no calls (no gateway): not offered from then on. */
  private readonly notOffered = new WeakSet<object>();

  constructor(deps: OrgCallControlDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'calls' });
  }

  offered(): ReadonlySet<CallAction> {
    const connection = this.d.connection();
    if (this.d.settings().connectionMode !== 'organisation') return NONE;
    if (connection?.relayCalls && this.notOffered.has(connection)) return NONE;
    return RELAY_ACTIONS;
  }

  async dial(number: string): Promise<CallControlResult> {
    if (!this.offered().has('dial')) return callRefusal('not-offered');
    const target = dialableNumber(number, this.d.settings().defaultRegion);
    if (!target) return invalidNumberRefusal(number);
    const connection = this.d.connection();
    if (!connection?.relayCalls) return notConnectedRefusal();
    const ticket = connection.engine.expectOwnDial?.(target.dial);
    const result = await this.send(connection, (relay) => relay.dial(target.dial));
    if (result.ok && result.callId !== undefined) {
      ticket?.answered(result.callId);
      this.logger.info('dialled', { callId: result.callId });
    } else ticket?.failed();
    return result;
  }

  async transfer(callId: string, to: string, mode: TransferMode): Promise<CallControlResult> {
    if (!this.offered().has('transfer')) return callRefusal('not-offered');
    const target = dialableNumber(to, this.d.settings().defaultRegion);
    if (!target) return invalidNumberRefusal(to);
    return this.onCall(callId, (relay) => relay.transfer(callId, target.dial, mode));
  }

  async hangup(callId: string): Promise<CallControlResult> {
    if (!this.offered().has('hangup')) return callRefusal('not-offered');
    return this.onCall(callId, (relay) => relay.hangup(callId));
  }

  completeTransfer(callId: string): Promise<CallControlResult> {
    return this.attended(callId, (relay) => relay.completeTransfer?.(callId));
  }

  cancelTransfer(callId: string): Promise<CallControlResult> {
    return this.attended(callId, (relay) => relay.cancelTransfer?.(callId));
  }

  /** An attended transfer's second step, through the relay (a relay wire without it: not offered). */
  private async attended(
    callId: string,
    step: (relay: CallControl) => Promise<CallControlResult> | undefined,
  ): Promise<CallControlResult> {
    if (!this.offered().has('transfer')) return callRefusal('not-offered');
    return this.onCall(
      callId,
      (relay) => step(relay) ?? Promise.resolve(callRefusal('not-offered')),
    );
  }

  /** An action on a call the user is in: its id checked, then through the relay's connection. */
  private onCall(
    callId: string,
    act: (relay: CallControl) => Promise<CallControlResult>,
  ): Promise<CallControlResult> {
    if (!isCallId(callId)) return Promise.resolve(callRefusal('no-such-call'));
    const connection = this.d.connection();
    if (!connection?.relayCalls) return Promise.resolve(notConnectedRefusal());
    return this.send(connection, act);
  }

  answer(_callId: string): Promise<CallControlResult> {
    return Promise.resolve(callRefusal('not-offered'));
  }

  decline(_callId: string): Promise<CallControlResult> {
    return Promise.resolve(callRefusal('not-offered'));
  }

  private async send(
    connection: Connection & { relayCalls?: CallControl },
    act: (relay: CallControl) => Promise<CallControlResult>,
  ): Promise<CallControlResult> {
    const result = await act(connection.relayCalls!);
    if (!result.ok && result.refusal === 'not-offered') this.notOffered.add(connection);
    return result;
  }
}

/**
 * The app's CallControl: organisation mode's (through the relay) while the settings in force say
 * organisation mode, the direct mode's (the phone system's own API) otherwise.
 */
export function callControlByMode(
  organisation: () => boolean,
  direct: CallControl,
  org: CallControl,
): CallControl {
  const pick = () => (organisation() ? org : direct);
  return {
    offered: () => pick().offered(),
    dial: (number) => pick().dial(number),
    transfer: (callId, to, mode) => pick().transfer(callId, to, mode),
    hangup: (callId) => pick().hangup(callId),
    completeTransfer: (callId) =>
      pick().completeTransfer?.(callId) ?? Promise.resolve(callRefusal('not-offered')),
    cancelTransfer: (callId) =>
      pick().cancelTransfer?.(callId) ?? Promise.resolve(callRefusal('not-offered')),
    answer: (callId) => pick().answer(callId),
    decline: (callId) => pick().decline(callId),
  };
}
