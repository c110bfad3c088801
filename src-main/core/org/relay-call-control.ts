/**
 * Acting on calls in organisation mode (issue 38 item 5): the desktop holds no credential of the
 * phone system, so CallControl goes through the relay's `POST /v1/calls/<tenant>`
 * (docs/relay-protocol.md 2.5) with the user's own sign-in (the OrgTokenSource the stream uses).
 * The relay decides the extension (the user's own); this sends none unless asked for one of the
 * user's (`from`). Answer/decline (uaCSTA) are not offered through the relay.
 */
import type { Words } from '../../../src-shared/i18n/phrase.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type {
  CallAction,
  CallControl,
  CallControlRefusal,
  CallControlResult,
  TransferMode,
} from '../ports/call-control.ts';
import type { TokenSource } from '../events/contracts.ts';
import { callRefusal, callRefusalOf, isCallRefusal } from '../../../src-shared/api/call-api.ts';
import { relayHttpUrl } from '../relay-client/relay-source.ts';
import { RELAY_ERRCODE } from '../../../src-shared/relay/relay-protocol.ts';

export interface RelayCallControlConfig {
  relayUrl: string;
  tenant: string;
}

export interface RelayCallControlDeps {
  fetch: typeof fetch;
  tokens: TokenSource;
  logger: Logger;
  /**
   * The words for a refusal; by default the phone system's own CallControl's (`status.call.refused.*`
   * through src-shared/api/call-api.ts), so the user reads the same sentence whichever way the
   * call went.
   */
  wordsFor?: (refusal: CallControlRefusal) => Words;
  /** Bounds one request (default 10 s). */
  timeoutMs?: number;
}

const OFFERED: ReadonlySet<CallAction> = new Set<CallAction>(['dial', 'transfer', 'hangup']);
const MAX_ANSWER = 4096;

export class RelayCallControl implements CallControl {
  private readonly config: RelayCallControlConfig;
  private readonly deps: RelayCallControlDeps;

  constructor(config: RelayCallControlConfig, deps: RelayCallControlDeps) {
    this.config = config;
    this.deps = deps;
  }

  offered(): ReadonlySet<CallAction> {
    return OFFERED;
  }

  dial(number: string): Promise<CallControlResult> {
    return this.send({ action: 'dial', to: number });
  }

  transfer(callId: string, to: string, mode: TransferMode): Promise<CallControlResult> {
    return this.send({ action: 'transfer', callId, to, mode });
  }

  hangup(callId: string): Promise<CallControlResult> {
    return this.send({ action: 'hangup', callId });
  }

  completeTransfer(callId: string): Promise<CallControlResult> {
    return this.send({ action: 'complete-transfer', callId });
  }

  cancelTransfer(callId: string): Promise<CallControlResult> {
    return this.send({ action: 'cancel-transfer', callId });
  }

  answer(): Promise<CallControlResult> {
    return Promise.resolve(this.refused('not-offered'));
  }

  decline(): Promise<CallControlResult> {
    return Promise.resolve(this.refused('not-offered'));
  }

  private refused(refusal: CallControlRefusal): CallControlResult {
    if (!this.deps.wordsFor) return callRefusal(refusal);
    return { ok: false, refusal, words: this.deps.wordsFor(refusal), message: refusal };
  }

  private async send(body: Record<string, string>): Promise<CallControlResult> {
    let token: string;
    try {
      token = (await this.deps.tokens.getToken()).value;
    } catch (error) {
      // No sign-in (or it cannot be renewed): its own words ("Not signed in to your organisation").
      return this.deps.wordsFor ? this.refused('unreachable') : callRefusalOf(error);
    }
    const url = relayHttpUrl(
      this.config.relayUrl,
      `/v1/calls/${encodeURIComponent(this.config.tenant)}`,
    );
    let status: number;
    let answer: unknown;
    try {
      const res = await this.deps.fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        // Longer than the relay's own worst case (a standby waits 8 s for the lease holder, then
        // 4 s for a request it took: src-relay/gateway/call-handoff.ts), so its answer is heard.
        signal: AbortSignal.timeout(this.deps.timeoutMs ?? 15_000),
      });
      status = res.status;
      const text = await res.text();
      answer = text.length <= MAX_ANSWER ? (JSON.parse(text) as unknown) : null;
    } catch (err) {
      this.deps.logger.warn('call request to the relay failed', {
        action: body.action,
        error: err,
      });
      // Sent and not answered in time: it may have been carried out (say so, never "not done").
      return this.refused(
        err instanceof Error && err.name === 'TimeoutError' ? 'uncertain' : 'unreachable',
      );
    }
    if (typeof answer !== 'object' || answer === null) return this.refused('refused');
    const a = answer as { ok?: unknown; callId?: unknown; refusal?: unknown; errcode?: unknown };
    if (status === 200 && a.ok === true)
      return typeof a.callId === 'string' && a.callId.length <= 128
        ? { ok: true, callId: a.callId }
        : { ok: true };
    if (status === 401) {
      // The relay refused the sign-in: the token is not handed out again (a fresh one, renewed as
      // the event stream renews it, next time). Its errcode says which (RELAY_ERRCODE, as the
      // stream's handshake): revoked by the administrator (signing in again will not help) or a
      // sign-in that is unknown or expired (sign in again).
      this.deps.tokens.invalidate(token);
      return this.refused(a.errcode === RELAY_ERRCODE.revoked ? 'revoked' : 'sign-in-expired');
    }
    return this.refused(isCallRefusal(a.refusal) ? a.refusal : 'refused');
  }
}
