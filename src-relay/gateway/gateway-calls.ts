/**
 * Gateway mode's call actions (docs/relay-protocol.md 2.5): *Make a Call*, *Transfer a Call* and
 * *Hang up a Call* (docs/phone-systems/yeastar-p-series.md section 10) asked of the phone system
 * with the tokens the gateway already holds (GatewayTokens: never a sign-in of its own, so the
 * organisation still holds 1 of the API application's 8 tokens), on the signed-in user's own
 * extensions only. What the route (call-route.ts) has decided before: who the user is, their
 * extensions (the relay's record), the rate. What is decided here:
 *
 * - A dial's caller is the extension the route chose (one of the user's own); the callee is a
 *   number as the desktop's phone-number module sends it.
 * - Transfer and hang-up look the call up (*Query Calls*) at the moment of the action: the call
 *   must have a live member that is one of the user's extensions; else `no-such-call`, so a user
 *   can never hang up or move a colleague's call. Hang-up ends the user's own member; a blind
 *   transfer moves the other party, an attended one starts from the user's member.
 * - A token the phone system says expired is invalidated and the action asked once more with the
 *   next (refreshed) one.
 * - Failures are results with the port's refusal ids (src-shared/api/call-api.ts `callRefusalOf`):
 *   the same mapping, and the same English, as the direct mode.
 */
import {
  callRefusal,
  callRefusalOf,
  type CallMember,
  type CallRefusalId,
} from '../../src-shared/api/call-api.ts';
import { isServiceError } from '../../src-shared/api/service-errors.ts';
import type { GatewayUpstream } from './upstream.ts';

/** What the call actions need of a tenant's upstream: its client, and its tokens. */
export type CallSource = Pick<GatewayUpstream, 'client'> & {
  tokens: Pick<GatewayUpstream['tokens'], 'get'> &
    Partial<Pick<GatewayUpstream['tokens'], 'invalidate'>>;
};

export type CallOutcome =
  { ok: true; callId?: string } | { ok: false; refusal: CallRefusalId; errmsg: string };

/** The call actions of one tenant, on behalf of a user whose extensions the caller vouches for. */
export interface GatewayCalls {
  /** Whether the tenant's phone system has a call API at all. */
  readonly offered: boolean;
  dial(caller: string, number: string): Promise<CallOutcome>;
  transfer(
    own: readonly string[],
    callId: string,
    to: string,
    mode: 'blind' | 'attended',
  ): Promise<CallOutcome>;
  hangup(own: readonly string[], callId: string): Promise<CallOutcome>;
}

/** A member still in the call (not hung up). */
function live(m: CallMember): boolean {
  return m.channelId !== undefined && m.status !== 'BYE';
}

function refused(id: CallRefusalId): CallOutcome {
  return { ok: false, refusal: id, errmsg: callRefusal(id).message };
}

export function gatewayCalls(source: CallSource): GatewayCalls {
  /** `act` with a token; once more with the next token when the phone system says it expired. */
  async function withToken<T>(act: (token: string) => Promise<T>): Promise<T> {
    const token = await source.tokens.get();
    try {
      return await act(token.value);
    } catch (error) {
      if (!isServiceError(error) || error.kind !== 'expired' || !source.tokens.invalidate)
        throw error;
      source.tokens.invalidate(token.value);
      return act((await source.tokens.get()).value);
    }
  }

  async function attempt(run: () => Promise<CallOutcome>): Promise<CallOutcome> {
    try {
      return await run();
    } catch (error) {
      const r = callRefusalOf(error);
      return { ok: false, refusal: r.refusal, errmsg: r.message };
    }
  }

  /** The call as the phone system lists it now, and the user's own live member in it. */
  async function own(
    token: string,
    extensions: readonly string[],
    callId: string,
  ): Promise<{ mine: CallMember; members: CallMember[] } | null> {
    const calls = await source.client.queryCalls(token, { callId });
    const call = calls.find((c) => c.callId === callId);
    const mine = call?.members.find(
      (m) => m.kind === 'extension' && extensions.includes(m.number) && live(m),
    );
    return call && mine ? { mine, members: call.members } : null;
  }

  return {
    get offered() {
      return source.client.controlsCalls;
    },
    dial: (caller, number) =>
      attempt(async () => {
        const answer = await withToken((t) => source.client.dial(t, { caller, callee: number }));
        return { ok: true, callId: answer.callId };
      }),
    transfer: (extensions, callId, to, mode) =>
      attempt(() =>
        withToken(async (token) => {
          const found = await own(token, extensions, callId);
          if (!found) return refused('no-such-call');
          const other = found.members.find((m) => m !== found.mine && live(m));
          if (mode === 'blind' && !other) return refused('no-such-call');
          // Blind: the member who is moved (the other party); attended: the one who transfers.
          const channelId = mode === 'blind' ? other!.channelId! : found.mine.channelId!;
          const answer = await source.client.transfer(token, {
            type: mode,
            channelId,
            number: to,
            dialPermission: found.mine.number,
          });
          return { ok: true, callId: answer.callId ?? callId };
        }),
      ),
    hangup: (extensions, callId) =>
      attempt(() =>
        withToken(async (token) => {
          const found = await own(token, extensions, callId);
          if (!found) return refused('no-such-call');
          const answer = await source.client.hangup(token, found.mine.channelId!);
          return { ok: true, callId: answer.callId ?? callId };
        }),
      ),
  };
}
