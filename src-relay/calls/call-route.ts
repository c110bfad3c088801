import type http from 'node:http';
import type { Logger } from '../../src-shared/process/log.ts';
import type { RelayConfig } from '../config.ts';
import { clientAddress } from '../admission.ts';
import { reply } from '../http-reply.ts';
import { RefusalBudget } from '../refusal-budget.ts';
import { tenantInPath } from '../tenants.ts';
import { TokenBucket } from '../token-bucket.ts';
import type { UserAuthenticator } from '../users/user-auth.ts';
import type { CallRefusalId } from '../../src-shared/api/call-api.ts';
import { RELAY_ERRCODE } from '../../src-shared/relay/relay-protocol.ts';

/**
 * Organisation mode's call requests (issue 38 item 5, docs/relay-protocol.md 2.6):
 * `POST /v1/calls/<tenant>` (dial, transfer, an attended transfer's complete or cancel, hang-up) with the user's bearer credential (a device credential or an OpenID
 * sign-in, as the stream's handshake takes). The relay acts only from the user's own extensions:
 * the extension comes from the relay's record of the user; a request may name one of them
 * (`from`), never another. Each request is one of the user's rate-limited tokens and one audit
 * line (component "audit": who, what, the user's extension, the far number masked, the outcome;
 * never a credential or token). Answers carry CallControlRefusal's ids (call-control.ts).
 */

/** The phone system's answer to one call action (the call API client's, errcode as Yeastar's). */
export type PbxCallAnswer =
  | { ok: true; callId?: string }
  | { ok: false; errcode: number; errmsg: string }
  | { ok: false; unreachable: true }
  /** The call is not one the extension is in (any more): checked before acting on it. */
  | { ok: false; refusal: 'no-such-call' }
  /** The lease holder's own check (gateway/call-handoff.ts): not the user's extension now. */
  | { ok: false; refusal: 'not-own-extension' }
  /**
   * A request handed to the lease holder (gateway/call-handoff.ts): not picked up before the
   * deadline (nothing was done), or taken and not answered (the holder stopped mid-request).
   */
  | { ok: false; handoff: 'not-picked-up' | 'uncertain' };

/**
 * The smallest interface this route needs of the PBX call API client (dial-core's, in
 * src-shared/; it was not on its branch when this was written). Per tenant, with the tenant's
 * own credential and token handling (the relay's, not the desktop's).
 */
export interface RelayCallApi {
  /** `user`: the signed-in user (the relay's name), for a handoff to re-check the extension. */
  dial(fromExtension: string, to: string, user?: string): Promise<PbxCallAnswer>;
  transfer(
    fromExtension: string,
    callId: string,
    to: string,
    mode: 'blind' | 'attended',
    user?: string,
  ): Promise<PbxCallAnswer>;
  hangup(fromExtension: string, callId: string, user?: string): Promise<PbxCallAnswer>;
  /**
   * The second step of an attended transfer the extension started: `complete` (the caller goes to
   * the consulted party) or `abort` (the consultation ends, the user back with the caller).
   */
  attended(
    fromExtension: string,
    callId: string,
    operate: 'complete' | 'abort',
    user?: string,
  ): Promise<PbxCallAnswer>;
}

/** The port's refusal ids (src-shared/api/call-api.ts), and the relay's own two. */
export type CallRefusal = CallRefusalId | 'sign-in-required' | 'invalid-request';

export type CallRequest =
  | { action: 'dial'; to: string; from?: string }
  | { action: 'transfer'; callId: string; to: string; mode: 'blind' | 'attended'; from?: string }
  | { action: 'hangup'; callId: string; from?: string }
  | { action: 'complete-transfer' | 'cancel-transfer'; callId: string; from?: string };

export interface CallRouteDeps {
  config: RelayConfig;
  auth: UserAuthenticator | undefined;
  /** The tenant's call API; undefined: this tenant offers no call control through the relay. */
  api: (tenant: string) => RelayCallApi | undefined;
  logger: Logger;
  now: () => number;
  monotonic: () => number;
  /** Per user: at most `burst` requests at once, refilled `perMinute` (defaults 5 and 20). */
  rate?: { burst: number; perMinute: number };
  maxBodyBytes?: number;
}

export const CALLS_PATH = '/v1/calls/' as const;
const MAX_BODY = 2048;
const MAX_USERS = 10_000;
const NUMBER = /^\+?[0-9*#]{1,32}$/;
const CALL_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Yeastar's errcodes this route tells apart (docs/phone-systems/yeastar-p-series.md's table). */
function refusalOf(errcode: number): CallRefusal {
  if (errcode === 10005) return 'permission';
  return 'refused';
}

/** A number in the audit line: its last two digits only (personal data). */
export function maskNumber(n: string): string {
  return n.length <= 2 ? '**' : '*'.repeat(Math.min(n.length - 2, 8)) + n.slice(-2);
}

export function parseCallRequest(body: unknown): CallRequest | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const str = (v: unknown, re: RegExp) => (typeof v === 'string' && re.test(v) ? v : null);
  let from: string | undefined;
  if (b.from !== undefined) {
    const f = str(b.from, NUMBER);
    if (!f) return null;
    from = f;
  }
  const opt = from === undefined ? {} : { from };
  if (b.action === 'dial') {
    const to = str(b.to, NUMBER);
    return to ? { action: 'dial', to, ...opt } : null;
  }
  if (b.action === 'transfer') {
    const to = str(b.to, NUMBER);
    const callId = str(b.callId, CALL_ID);
    const mode = b.mode === 'attended' ? 'attended' : b.mode === 'blind' ? 'blind' : null;
    return to && callId && mode ? { action: 'transfer', callId, to, mode, ...opt } : null;
  }
  if (b.action === 'hangup' || b.action === 'complete-transfer' || b.action === 'cancel-transfer') {
    const callId = str(b.callId, CALL_ID);
    return callId ? { action: b.action, callId, ...opt } : null;
  }
  return null;
}

function refuse(
  res: http.ServerResponse,
  status: number,
  refusal: CallRefusal,
  message: string,
  errcode?: number,
): void {
  // A 401 carries the relay's errcode (RELAY_ERRCODE: revoked vs sign-in required), as the
  // stream's handshake and the claim route do, so the desktop tells "ask the administrator"
  // from "sign in again".
  reply(res, status, {
    ok: false,
    refusal,
    message,
    ...(errcode !== undefined ? { errcode } : {}),
  });
}

function readBody(req: http.IncomingMessage, max: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > max) {
        done = true;
        resolve(null);
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', () => {
      if (!done) resolve(null);
      done = true;
    });
  });
}

/** Returns a handler, false for paths other than `/v1/calls/<tenant>`. */
export function callRoute(
  deps: CallRouteDeps,
): (req: http.IncomingMessage, res: http.ServerResponse, path: string) => boolean {
  const audit = deps.logger.child({ component: 'audit' });
  // Refused credentials per client address, as the stream's handshake counts them (upgrade.ts).
  const refusals = new RefusalBudget(
    deps.config.auth.maxFailuresPerAddressPerMinute,
    deps.monotonic,
  );
  const rate = deps.rate ?? { burst: 5, perMinute: 20 };
  // Bounded: past MAX_USERS, the oldest user's bucket goes (a full one loses nothing).
  const buckets = new Map<string, TokenBucket>();
  const bucketOf = (key: string) => {
    let b = buckets.get(key);
    if (!b) {
      if (buckets.size >= MAX_USERS) buckets.delete(buckets.keys().next().value!);
      b = new TokenBucket(rate.burst, rate.perMinute, deps.monotonic);
      buckets.set(key, b);
    }
    return b;
  };
  const handle = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    tenant: string,
  ): Promise<void> => {
    const header = req.headers.authorization ?? '';
    const token = /^Bearer (\S{1,4096})$/.exec(header)?.[1];
    if (!token || !deps.auth)
      return refuse(
        res,
        401,
        'sign-in-required',
        'sign in to your organisation first',
        RELAY_ERRCODE.signInRequired,
      );
    const address = clientAddress(req, deps.config.trustProxy);
    if (!refusals.allows(address))
      return refuse(res, 429, 'rate-limited', 'too many refused sign-ins from this address');
    const verdict = await deps.auth.authenticate(tenant, token);
    if (!verdict.ok && verdict.status !== 503) refusals.spend(address);
    if (!verdict.ok)
      return refuse(
        res,
        verdict.status === 503 ? 503 : 401,
        verdict.status === 503 ? 'unreachable' : 'sign-in-required',
        verdict.reason,
        verdict.status === 503
          ? undefined
          : verdict.errcode === RELAY_ERRCODE.revoked
            ? RELAY_ERRCODE.revoked
            : RELAY_ERRCODE.signInRequired,
      );
    const id = verdict.identity;
    if (id.expiresAt !== null && id.expiresAt <= deps.now())
      return refuse(
        res,
        401,
        'sign-in-required',
        'your sign-in has expired; sign in again',
        RELAY_ERRCODE.signInRequired,
      );
    const text = await readBody(req, deps.maxBodyBytes ?? MAX_BODY);
    if (text === null) return refuse(res, 413, 'invalid-request', 'request body too large');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const call = parseCallRequest(parsed);
    const line = (outcome: string, extra: Record<string, unknown> = {}) =>
      audit.info('call action', {
        tenant,
        user: id.user,
        via: id.via,
        action: call?.action ?? 'invalid',
        ...extra,
        outcome,
      });
    if (!call) {
      line('invalid-request');
      return refuse(res, 400, 'invalid-request', 'not a valid call request');
    }
    if (!bucketOf(`${tenant}\u0000${id.user}`).take()) {
      line('rate-limited');
      return refuse(res, 429, 'rate-limited', 'too many call requests; wait a moment');
    }
    // The extension is the relay's record of the user; a request may only pick among them.
    const own = id.extensions;
    const from = call.from ?? own[0];
    const target = 'to' in call ? { to: maskNumber(call.to) } : {};
    if (from === undefined || !own.includes(from)) {
      line('not-own-extension', { requested: call.from ?? null, ...target });
      return refuse(res, 403, 'not-own-extension', 'you can only call from your own extension');
    }
    const api = deps.api(tenant);
    if (!api) {
      line('not-offered', { extension: from, ...target });
      return refuse(res, 404, 'not-offered', 'this phone system offers no calls through the relay');
    }
    let answer: PbxCallAnswer;
    try {
      answer =
        call.action === 'dial'
          ? await api.dial(from, call.to, id.user)
          : call.action === 'transfer'
            ? await api.transfer(from, call.callId, call.to, call.mode, id.user)
            : call.action === 'hangup'
              ? await api.hangup(from, call.callId, id.user)
              : await api.attended(
                  from,
                  call.callId,
                  call.action === 'complete-transfer' ? 'complete' : 'abort',
                  id.user,
                );
    } catch {
      answer = { ok: false, unreachable: true };
    }
    if (answer.ok) {
      line('ok', { extension: from, ...target });
      return reply(res, 200, { ok: true, ...(answer.callId ? { callId: answer.callId } : {}) });
    }
    if ('handoff' in answer) {
      line(answer.handoff === 'uncertain' ? 'uncertain' : 'not-picked-up', {
        extension: from,
        ...target,
      });
      return answer.handoff === 'uncertain'
        ? refuse(
            res,
            504,
            'uncertain',
            'the relay instance connected to the phone system stopped while acting on this request: it may or may not have been carried out; check your phone before trying again',
          )
        : refuse(
            res,
            503,
            'unreachable',
            'the relay instance connected to the phone system did not take this request in time; nothing was done; try again',
          );
    }
    if ('refusal' in answer && answer.refusal === 'not-own-extension') {
      line('not-own-extension', { extension: from, ...target, recheck: 'holder' });
      return refuse(res, 403, 'not-own-extension', 'you can only call from your own extension');
    }
    if ('refusal' in answer) {
      line(answer.refusal, { extension: from, ...target });
      return refuse(res, 404, answer.refusal, 'that call has ended, or it is not one of yours');
    }
    if ('unreachable' in answer) {
      line('unreachable', { extension: from, ...target });
      return refuse(res, 502, 'unreachable', 'the phone system could not be reached');
    }
    const refusal = refusalOf(answer.errcode);
    line(refusal, { extension: from, ...target, errcode: answer.errcode });
    return refuse(
      res,
      refusal === 'permission' ? 403 : 409,
      refusal,
      refusal === 'permission'
        ? 'the phone system refused: its API application lacks the call-control permission'
        : 'the phone system refused the request',
    );
  };
  return (req, res, path) => {
    const t = tenantInPath(deps.config.tenants, path, CALLS_PATH);
    if (t === 'no-match') return false;
    if (!t || t.config.access !== 'users') {
      reply(res, 404, { ok: false, error: 'not found' });
      return true;
    }
    if (req.method !== 'POST') {
      reply(res, 405, { ok: false, error: 'POST only' });
      return true;
    }
    handle(req, res, t.name).catch((err: unknown) => {
      deps.logger.error('call request failed', { error: err });
      reply(res, 500, { ok: false, refusal: 'refused', message: 'internal error' });
    });
    return true;
  };
}
