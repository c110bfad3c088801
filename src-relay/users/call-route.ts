/**
 * POST /v1/call/<tenant> (docs/relay-protocol.md 2.5): organisation mode's call actions, for a
 * tenant whose phone system credential the relay holds (gateway mode, gateway/gateway-calls.ts).
 *
 * - Who asks: the bearer credential of one of the relay's users (a device credential or a single
 *   sign-on token, users/user-auth.ts, as the stream's handshake checks it); refused credentials
 *   count against the client address's budget, as at the handshake.
 * - Whose extension: always the relay's record of the user. A dial's caller is the user's first
 *   extension, or the one the body names if it is one of the user's own (else 403
 *   `not-own-extension`, nothing asked of the phone system); transfer and hang-up act only on a
 *   call the user's extension is in (gateway-calls.ts).
 * - How often: `perUserPerMinute` actions per user (a token bucket, as much again in a burst);
 *   past it, 429 `rate-limited` without asking the phone system.
 * - The audit: one log line per action that reached the user check ("call action": tenant, user,
 *   action, outcome, the number with all but its last two digits masked); never a token.
 *
 * Answers: 200 `{"ok":true,"callId":...}`, or `{"ok":false,"refusal":<CallControlRefusal id>,
 * "errmsg":...}` with the status of `STATUS_OF`.
 */
import type http from 'node:http';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import {
  CALL_ID_PATTERN,
  RELAY_CALL_NUMBER,
  RELAY_ERRCODE,
  type RelayCallAnswer,
} from '../../src-shared/relay/relay-protocol.ts';
import { clientAddress } from '../admission.ts';
import type { RelayConfig } from '../config.ts';
import type { CallOutcome, GatewayCalls } from '../gateway/gateway-calls.ts';
import { reply } from '../http-reply.ts';
import { RefusalBudget } from '../refusal-budget.ts';
import { tenantInPath } from '../tenants.ts';
import { readBody } from '../webhook-handler.ts';
import type { UserAuthenticator } from './user-auth.ts';

/** A call action is a few short fields: anything larger is not one. */
export const MAX_CALL_BODY_BYTES = 2 * 1024;
/** Call actions a user may ask for per minute (and in a burst), by default. */
export const CALLS_PER_USER_PER_MINUTE = 10;
const EXTENSION = /^[0-9]{1,7}$/;

type Refusal = Extract<CallOutcome, { ok: false }>['refusal'];

/** The HTTP status of each refusal. */
export const STATUS_OF: Record<Refusal, number> = {
  'not-offered': 501,
  'invalid-number': 400,
  permission: 403,
  'not-own-extension': 403,
  'no-such-call': 404,
  'rate-limited': 429,
  unreachable: 503,
  refused: 502,
};

export interface CallRouteDeps {
  config: RelayConfig;
  logger: Logger;
  clock: Clock;
  /** Checks a user's bearer credential; absent when the relay has no users. */
  userAuth: UserAuthenticator | undefined;
  /** The tenant's call actions in gateway mode; undefined for a tenant the relay is no gateway of. */
  calls: (tenant: string) => GatewayCalls | undefined;
  perUserPerMinute?: number;
}

type Action =
  | { action: 'dial'; number: string; extension?: string }
  | { action: 'transfer'; callId: string; to: string; mode: 'blind' | 'attended' }
  | { action: 'hangup'; callId: string };

/** The body as an action, or why not (a refusal id and its reason). */
function parseAction(raw: Buffer): Action | { refusal: Refusal; errmsg: string } {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    body = null;
  }
  const malformed = {
    refusal: 'refused' as const,
    errmsg:
      'send {"action":"dial","number":"..."}, {"action":"transfer","callId":"...","to":"...","mode":"blind"} or {"action":"hangup","callId":"..."}',
  };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return malformed;
  const f = body as Record<string, unknown>;
  const number = (value: unknown) =>
    typeof value === 'string' && RELAY_CALL_NUMBER.test(value) ? value : null;
  const badNumber = {
    refusal: 'invalid-number' as const,
    errmsg: 'the number must be digits, with an optional leading +, at most 17 digits',
  };
  if (f.action === 'dial') {
    const n = number(f.number);
    if (n === null) return badNumber;
    if (f.extension !== undefined && typeof f.extension !== 'string') return malformed;
    return {
      action: 'dial',
      number: n,
      ...(f.extension !== undefined && { extension: f.extension }),
    };
  }
  const callId = typeof f.callId === 'string' && CALL_ID_PATTERN.test(f.callId) ? f.callId : null;
  if (f.action === 'hangup') return callId === null ? malformed : { action: 'hangup', callId };
  if (f.action === 'transfer') {
    if (callId === null || (f.mode !== 'blind' && f.mode !== 'attended')) return malformed;
    const to = number(f.to);
    return to === null ? badNumber : { action: 'transfer', callId, to, mode: f.mode };
  }
  return malformed;
}

/** A number as the audit line shows it: its last two digits, the rest masked. */
export function maskedNumber(number: string): string {
  const digits = number.replace(/[^0-9]/g, '');
  return '*'.repeat(Math.max(0, digits.length - 2)) + digits.slice(-2);
}

/**
 * The handler of `/v1/call/<tenant>`; returns false for any other path. A tenant that is not
 * configured, or not `access: "users"`, answers 404 as the other organisation paths do.
 */
export function callRoute(
  deps: CallRouteDeps,
): (req: http.IncomingMessage, res: http.ServerResponse, path: string) => boolean {
  const { config, clock } = deps;
  const audit = deps.logger.child({ component: 'calls' });
  const monotonic = () => clock.monotonic();
  // Refused credentials per client address (the handshake's budget, counted apart).
  const refusals = new RefusalBudget(config.auth.maxFailuresPerAddressPerMinute, monotonic);
  // Actions per user: RefusalBudget is the relay's bounded map of token buckets.
  const perUser = new RefusalBudget(deps.perUserPerMinute ?? CALLS_PER_USER_PER_MINUTE, monotonic);
  const retryAfter = String(Math.ceil(60 / (deps.perUserPerMinute ?? CALLS_PER_USER_PER_MINUTE)));

  const answer = (res: http.ServerResponse, outcome: CallOutcome) => {
    if (outcome.ok) return reply(res, 200, outcome satisfies RelayCallAnswer);
    if (outcome.refusal === 'rate-limited') res.setHeader('Retry-After', retryAfter);
    if (outcome.refusal === 'unreachable') res.setHeader('Retry-After', '5');
    reply(res, STATUS_OF[outcome.refusal], outcome satisfies RelayCallAnswer);
  };

  async function handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    tenant: string,
  ): Promise<void> {
    const address = clientAddress(req, config.trustProxy);
    if (!refusals.allows(address)) {
      res.setHeader('Retry-After', '60');
      return reply(res, 429, {
        ok: false,
        refusal: 'rate-limited',
        errmsg: 'too many refused credentials from this address; retry later',
      } satisfies RelayCallAnswer);
    }
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    const verdict = token
      ? await deps.userAuth!.authenticate(tenant, token)
      : ({
          ok: false,
          status: 401,
          errcode: RELAY_ERRCODE.signInRequired,
          reason: 'bearer credential required',
        } as const);
    if (!verdict.ok) {
      if (verdict.status !== 503) refusals.spend(address);
      return reply(res, verdict.status, {
        ok: false,
        refusal: verdict.status === 503 ? 'unreachable' : 'refused',
        errcode: verdict.errcode,
        errmsg: verdict.reason,
      } satisfies RelayCallAnswer);
    }
    const { user, extensions } = verdict.identity;
    const line = (fields: Record<string, unknown>, outcome: CallOutcome) =>
      audit.info('call action', {
        tenant,
        user,
        ...fields,
        outcome: outcome.ok ? 'ok' : outcome.refusal,
        ...(outcome.ok && outcome.callId !== undefined && { callId: outcome.callId }),
      });
    if (!perUser.reserve(`${tenant}\n${user}`)) {
      const outcome: CallOutcome = {
        ok: false,
        refusal: 'rate-limited',
        errmsg: 'too many call actions; retry in a moment',
      };
      line({}, outcome);
      return answer(res, outcome);
    }
    const raw = await readBody(req, MAX_CALL_BODY_BYTES);
    if (raw === 'aborted') return;
    if (raw === 'too-large')
      return reply(res, 413, {
        ok: false,
        refusal: 'refused',
        errmsg: 'request too large',
      } satisfies RelayCallAnswer);
    const action = parseAction(raw);
    if (!('action' in action)) {
      const outcome: CallOutcome = { ok: false, ...action };
      line({ action: 'malformed' }, outcome);
      return answer(res, outcome);
    }
    const calls = deps.calls(tenant);
    const fields: Record<string, unknown> = { action: action.action };
    if (action.action === 'dial') fields.number = maskedNumber(action.number);
    if (action.action === 'transfer') fields.to = maskedNumber(action.to);
    if (action.action !== 'dial') fields.callId = action.callId;
    let outcome: CallOutcome;
    if (!calls?.offered)
      outcome = {
        ok: false,
        refusal: 'not-offered',
        errmsg:
          'this relay does not hold the phone system credential of this tenant (no gateway), or its phone system has no call API',
      };
    else if (action.action === 'dial') {
      // The caller is always one of the user's own extensions, as the relay's record says.
      const caller = action.extension ?? extensions[0];
      fields.extension = caller;
      if (caller === undefined || !EXTENSION.test(caller) || !extensions.includes(caller))
        outcome = {
          ok: false,
          refusal: 'not-own-extension',
          errmsg: 'the relay dials only from your own extensions',
        };
      else outcome = await calls.dial(caller, action.number);
    } else if (action.action === 'transfer')
      outcome = await calls.transfer(extensions, action.callId, action.to, action.mode);
    else outcome = await calls.hangup(extensions, action.callId);
    line(fields, outcome);
    answer(res, outcome);
  }

  return (req, res, path) => {
    const t = tenantInPath(config.tenants, path, '/v1/call/');
    if (t === 'no-match') return false;
    if (!t || t.config.access !== 'users' || !deps.userAuth)
      return (reply(res, 404, { ok: false, refusal: 'refused', errmsg: 'unknown tenant' }), true);
    if (req.method !== 'POST')
      return (reply(res, 405, { ok: false, refusal: 'refused', errmsg: 'POST only' }), true);
    handle(req, res, t.name).catch((err: Error) => {
      audit.error('call action failed', { tenant: t.name, error: err });
      reply(res, 500, { ok: false, refusal: 'refused', errmsg: 'internal error' });
    });
    return true;
  };
}
