/**
 * Organisation mode's CallControl (issue 38 item 5): the desktop holds no secret of the phone
 * system, so its calls go through the relay (`POST /v1/call/<tenant>`, docs/relay-protocol.md 2.5)
 * with the organisation session's credential (the connection's OrgTokenSource), and the relay acts
 * on the signed-in user's own extensions only. The caller is never chosen here: the relay takes it
 * from its record of the user.
 *
 * - Numbers are read by the one phone-number module (`dialableNumber`), as in the direct mode;
 *   anything else is `invalid-number` and never sent.
 * - A dial tells the engine first (`expectOwnDial`) so its caller-first ring is the user's own
 *   call, and settles the ticket with the call id the relay answered, or as failed.
 * - The relay's answer is validated at the boundary: a call id shaped like one, a refusal id of
 *   the port; anything else is `refused`. A refused credential (401) is invalidated and asked once
 *   more with the next (an ID token renewed); then "not signed in" words.
 * - Refusals are said in the catalogue words of the direct mode (`status.call.refused.*`); the
 *   relay's `errmsg` goes to the log only.
 */
import {
  callRefusal,
  callRefusalOf,
  isCallId,
  type CallRefusalId,
} from '../../../src-shared/api/call-api.ts';
import { networkFault, unreachableFault } from '../../../src-shared/net/net-errors.ts';
import { ServiceError } from '../../../src-shared/api/service-errors.ts';
import { phrase } from '../../../src-shared/i18n/phrase.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { previewText } from '../../../src-shared/ui/text.ts';
import { relayCallPath, type RelayCallRequest } from '../../../src-shared/relay/relay-protocol.ts';
import type { TokenSource } from '../events/contracts.ts';
import type { Connection } from '../connection/connection.ts';
import { dialableNumber } from '../numbers/phone-number.ts';
import type {
  CallAction,
  CallControl,
  CallControlResult,
  TransferMode,
} from '../ports/call-control.ts';
import { relayHttpUrl } from '../relay-client/relay-source.ts';
import type { CallSettings } from '../calls/direct-call-control.ts';
import { notSignedIn } from './org-token-source.ts';

/** How long one call action at the relay may take (the relay asks the phone system in between). */
export const RELAY_CALL_TIMEOUT_MS = 15_000;
/** The relay's answer is a few short fields: a longer one is not its answer. */
const MAX_ANSWER_CHARS = 4_096;

const REFUSALS: ReadonlySet<string> = new Set<CallRefusalId>([
  'not-offered',
  'invalid-number',
  'permission',
  'not-own-extension',
  'no-such-call',
  'rate-limited',
  'unreachable',
  'refused',
]);

/** The wire to the relay's call endpoint, as an organisation connection holds it. */
export interface RelayCalls {
  send(request: RelayCallRequest): Promise<CallControlResult>;
}

export interface RelayCallsOptions {
  relayUrl: string;
  tenant: string;
  /** The organisation session's credential (OrgTokenSource): a device credential or an ID token. */
  tokens: TokenSource;
  fetch: typeof fetch;
  logger: Logger;
}

/** POSTs call actions to the relay with the session's credential; every failure a result. */
export function relayCalls(options: RelayCallsOptions): RelayCalls {
  const url = relayHttpUrl(options.relayUrl, relayCallPath(options.tenant));
  const logger = options.logger.child({ component: 'calls' });

  async function post(
    request: RelayCallRequest,
    token: string,
  ): Promise<{ status: number; text: string }> {
    try {
      const res = await options.fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(RELAY_CALL_TIMEOUT_MS),
      });
      return { status: res.status, text: (await res.text()).slice(0, MAX_ANSWER_CHARS + 1) };
    } catch (error) {
      throw (
        networkFault(error, url, 'call') ??
        unreachableFault(error, url, 'call') ??
        new ServiceError({
          kind: 'network',
          message: `the relay ${new URL(url).host} could not be reached`,
          cause: error,
          values: { host: new URL(url).host },
        })
      );
    }
  }

  return {
    async send(request) {
      try {
        let token = await options.tokens.getToken();
        let answer = await post(request, token.value);
        if (answer.status === 401) {
          // An ID token that ended since: once more with the next one.
          options.tokens.invalidate(token.value);
          token = await options.tokens.getToken();
          answer = await post(request, token.value);
          if (answer.status === 401) throw notSignedIn();
        }
        const result = readAnswer(answer.status, answer.text);
        if (!result.ok)
          logger.warn(`${request.action} refused by the relay`, {
            refusal: result.refusal,
            status: answer.status,
            errmsg: result.message,
          });
        return result.ok ? result : callRefusal(result.refusal);
      } catch (error) {
        const refusal = callRefusalOf(error);
        logger.warn(`${request.action} not done`, { refusal: refusal.refusal, error });
        return refusal;
      }
    },
  };
}

/**
 * The relay's answer (docs/relay-protocol.md 2.5), validated: `{ok:true, callId}` with a call id
 * shaped like one, or a refusal id of the port; anything else is `refused` (its status in the log).
 */
function readAnswer(
  status: number,
  text: string,
): { ok: true; callId?: string } | { ok: false; refusal: CallRefusalId; message: string } {
  let body: unknown = null;
  if (text.length <= MAX_ANSWER_CHARS)
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  const b = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  if (status === 200 && b.ok === true) {
    const callId = typeof b.callId === 'string' && isCallId(b.callId) ? b.callId : undefined;
    return callId === undefined ? { ok: true } : { ok: true, callId };
  }
  const message =
    typeof b.errmsg === 'string' ? previewText(b.errmsg, 200) : `the relay answered HTTP ${status}`;
  if (b.ok === false && typeof b.refusal === 'string' && REFUSALS.has(b.refusal))
    return { ok: false, refusal: b.refusal as CallRefusalId, message };
  // Not the endpoint's answer (an older relay, a proxy's page): the status says what it can.
  const refusal: CallRefusalId =
    status === 429
      ? 'rate-limited'
      : status === 502 || status === 503 || status === 504
        ? 'unreachable'
        : status === 404 || status === 405 || status === 413
          ? 'not-offered'
          : 'refused';
  return { ok: false, refusal, message };
}

export interface OrgCallControlDeps {
  /** The connection in force (null while none); an organisation connection carries `relayCalls`. */
  connection: () => (Connection & { relayCalls?: RelayCalls }) | null;
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
    if (!target) return invalidNumber(number);
    const connection = this.d.connection();
    if (!connection?.relayCalls) return notConnected();
    const ticket = connection.engine.expectOwnDial?.(target.dial);
    const result = await this.send(connection, { action: 'dial', number: target.dial });
    if (result.ok && result.callId !== undefined) {
      ticket?.answered(result.callId);
      this.logger.info('dialled', { callId: result.callId });
    } else ticket?.failed();
    return result;
  }

  async transfer(callId: string, to: string, mode: TransferMode): Promise<CallControlResult> {
    if (!this.offered().has('transfer')) return callRefusal('not-offered');
    const target = dialableNumber(to, this.d.settings().defaultRegion);
    if (!target) return invalidNumber(to);
    if (!isCallId(callId)) return callRefusal('no-such-call');
    const connection = this.d.connection();
    if (!connection?.relayCalls) return notConnected();
    return this.send(connection, { action: 'transfer', callId, to: target.dial, mode });
  }

  async hangup(callId: string): Promise<CallControlResult> {
    if (!this.offered().has('hangup')) return callRefusal('not-offered');
    if (!isCallId(callId)) return callRefusal('no-such-call');
    const connection = this.d.connection();
    if (!connection?.relayCalls) return notConnected();
    return this.send(connection, { action: 'hangup', callId });
  }

  answer(_callId: string): Promise<CallControlResult> {
    return Promise.resolve(callRefusal('not-offered'));
  }

  decline(_callId: string): Promise<CallControlResult> {
    return Promise.resolve(callRefusal('not-offered'));
  }

  private async send(
    connection: Connection & { relayCalls?: RelayCalls },
    request: RelayCallRequest,
  ): Promise<CallControlResult> {
    const result = await connection.relayCalls!.send(request);
    if (!result.ok && result.refusal === 'not-offered') this.notOffered.add(connection);
    return result;
  }
}

function invalidNumber(number: string) {
  return callRefusal('invalid-number', { number: previewText(number, 40) || '""' });
}

function notConnected() {
  return callRefusal('unreachable', undefined, [phrase('status.call.not-connected')]);
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
    answer: (callId) => pick().answer(callId),
    decline: (callId) => pick().decline(callId),
  };
}
