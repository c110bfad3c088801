/**
 * Gateway mode's call API for the relay's call route (calls/call-route.ts, docs/relay-protocol.md
 * 2.5): *Make a Call*, *Transfer a Call* and
 * *Hang up a Call* (docs/phone-systems/yeastar-p-series.md section 10) asked of the phone system
 * with the tokens the gateway already holds (GatewayTokens: never a sign-in of its own, so the
 * organisation still holds 1 of the API application's 8 tokens), on the signed-in user's own
 * extensions only. What the route has decided before: who the user is, the extension acted from
 * (one of the user's own, the relay's record), the rate. What is decided here:
 *
 * - A dial's caller is the extension the route chose (one of the user's own).
 * - Transfer and hang-up look the call up (*Query Calls*) at the moment of the action: the call
 *   must have a live member that is the route's extension; else `no-such-call`, so a user
 *   can never hang up or move a colleague's call. Hang-up ends the user's own member; a blind
 *   transfer moves the other party, an attended one starts from the user's member, and its
 *   complete or cancel (`attended_operate`) is sent on the user's member too.
 * - A token the phone system says expired is invalidated and the action asked once more with the
 *   next (refreshed) one.
 * - Failures are answers (never throws), read through the direct mode's table
 *   (src-shared/api/call-api.ts `callRefusalOf`): unreachable, the permission (10005), or the
 *   phone system's errcode.
 */
import { callRefusalOf, type CallMember } from '../../src-shared/api/call-api.ts';
import { isServiceError } from '../../src-shared/api/service-errors.ts';
import type { PbxCallAnswer, RelayCallApi } from '../calls/call-route.ts';
import type { GatewayUpstream } from './upstream.ts';

/** What the call actions need of a tenant's upstream: its client, and its tokens. */
export type CallSource = Pick<GatewayUpstream, 'client'> & {
  tokens: Pick<GatewayUpstream['tokens'], 'get'> &
    Partial<Pick<GatewayUpstream['tokens'], 'invalidate'>>;
};

/** A member still in the call (not hung up). */
function live(m: CallMember): boolean {
  return m.channelId !== undefined && m.status !== 'BYE';
}

/** A failure of the client (a ServiceError) as the route reads it. */
function failed(error: unknown): PbxCallAnswer {
  const refusal = callRefusalOf(error).refusal;
  if (refusal === 'unreachable') return { ok: false, unreachable: true };
  // 10005 and 70084 (the permission) are both `scope`: the route names 10005 as permission.
  if (refusal === 'permission') return { ok: false, errcode: 10005, errmsg: 'ACCESS DENIED' };
  const errcode = isServiceError(error) ? (error.errcode ?? 0) : 0;
  return { ok: false, errcode, errmsg: 'refused by the phone system' };
}

/**
 * The route's call API (calls/call-route.ts `RelayCallApi`) over a gateway tenant's upstream;
 * undefined where its phone system has no call API (the route then says not-offered).
 */
export function gatewayCallApi(source: CallSource): RelayCallApi | undefined {
  if (!source.client.controlsCalls) return undefined;
  const { client } = source;

  /** `act` with a token; once more with the next token when the phone system says it expired. */
  async function withToken(act: (token: string) => Promise<PbxCallAnswer>): Promise<PbxCallAnswer> {
    try {
      const token = await source.tokens.get();
      try {
        return await act(token.value);
      } catch (error) {
        if (!isServiceError(error) || error.kind !== 'expired' || !source.tokens.invalidate)
          throw error;
        source.tokens.invalidate(token.value);
        return await act((await source.tokens.get()).value);
      }
    } catch (error) {
      return failed(error);
    }
  }

  /** The call as the PBX lists it now, with `extension` a live member of it; else null. */
  async function onCall(token: string, extension: string, callId: string) {
    const calls = await client.queryCalls(token, { callId });
    const call = calls.find((c) => c.callId === callId);
    const mine = call?.members.find(
      (m) => m.kind === 'extension' && m.number === extension && live(m),
    );
    return call && mine ? { mine, members: call.members } : null;
  }

  const noSuchCall: PbxCallAnswer = { ok: false, refusal: 'no-such-call' };
  return {
    dial: (from, to) =>
      withToken(async (token) => {
        const answer = await client.dial(token, { caller: from, callee: to });
        return { ok: true, callId: answer.callId };
      }),
    transfer: (from, callId, to, mode) =>
      withToken(async (token) => {
        const found = await onCall(token, from, callId);
        if (!found) return noSuchCall;
        const other = found.members.find((m) => m !== found.mine && live(m));
        if (mode === 'blind' && !other) return noSuchCall;
        // Blind: the member who is moved (the other party); attended: the one who transfers.
        const channelId = mode === 'blind' ? other!.channelId! : found.mine.channelId!;
        const answer = await client.transfer(token, {
          type: mode,
          channelId,
          number: to,
          dialPermission: from,
        });
        return { ok: true, callId: answer.callId ?? callId };
      }),
    hangup: (from, callId) =>
      withToken(async (token) => {
        const found = await onCall(token, from, callId);
        if (!found) return noSuchCall;
        const answer = await client.hangup(token, found.mine.channelId!);
        return { ok: true, callId: answer.callId ?? callId };
      }),
    // The attended transfer's second request, on the user's own channel (the transferor's).
    attended: (from, callId, operate) =>
      withToken(async (token) => {
        const found = await onCall(token, from, callId);
        if (!found) return noSuchCall;
        const answer = await client.transfer(token, {
          type: 'attended',
          channelId: found.mine.channelId!,
          operate,
        });
        return { ok: true, callId: answer.callId ?? callId };
      }),
  };
}
