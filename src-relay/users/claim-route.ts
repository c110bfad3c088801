import type { IncomingMessage, ServerResponse } from 'node:http';
import { BoundedFifoMap } from '../../src-shared/kit/bounded-map.ts';
import {
  CALL_ID_PATTERN,
  CLAIM_DEVICE_PATTERN,
  RELAY_ERRCODE,
  type CallClaimAnswer,
} from '../../src-shared/relay/relay-protocol.ts';
import { reply } from '../http-reply.ts';
import type { SampledLog } from '../log-sampler.ts';
import type { RefusalBudget } from '../refusal-budget.ts';
import type { EventStore } from '../store/types.ts';
import { TokenBucket } from '../token-bucket.ts';
import { readBody } from '../webhook-handler.ts';
import type { UserAuthenticator } from './user-auth.ts';

/** A claim is one call id: anything larger is not one. */
const MAX_CLAIM_BYTES = 1024;
/** How long a claim is held: longer than any retry of a desktop's log (claimed-call-log.ts). */
export const CLAIM_TTL_MS = 24 * 3600_000;
/** Claims per user: a burst of this many, refilled at this many a minute. */
const CLAIM_BURST = 60;
const CLAIMS_PER_MINUTE = 120;

export interface ClaimDeps {
  auth: UserAuthenticator;
  store: EventStore;
  /** Failed sign-ins per client address (their own budget, not enrolment's). */
  refusals: RefusalBudget;
  /** Each user's claims (a bucket per `tenant \n user`, bounded). */
  buckets: BoundedFifoMap<TokenBucket>;
  monotonic: () => number;
  refusedLog: SampledLog;
  failedLog: SampledLog;
}

/** The per-user buckets' table: bounded, a user's bucket forgotten an hour after it was made. */
export function claimBuckets(): BoundedFifoMap<TokenBucket> {
  return new BoundedFifoMap(50_000, 3600_000);
}

/**
 * POST /v1/claim/<tenant> `{"callId":"..."}` with `Authorization: Bearer <credential>` (a device
 * credential or an OpenID token, as the stream's handshake takes): the first user to claim a call
 * id holds its CRM log for a day; answers 200 CallClaimAnswer `{callId, holder, mine}` to every
 * claim, so a retry by the holder is told it holds it. 401/403 as the handshake refuses, 400 for a
 * call id that is not one, 413 over 1 KiB, 429 past the user's rate, 503 when the store or the
 * users do not answer (the desktop retries). The credential is never logged.
 */
export async function handleClaim(
  req: IncomingMessage,
  res: ServerResponse,
  tenant: string,
  address: string,
  deps: ClaimDeps,
): Promise<void> {
  const header = req.headers.authorization;
  const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!deps.refusals.reserve(address)) {
    res.setHeader('Retry-After', '60');
    return reply(res, 429, {
      errcode: 42900,
      errmsg: 'too many refused sign-ins from this address',
    });
  }
  if (!token) {
    deps.refusedLog.write({ status: 401, reason: 'no credential' });
    return reply(res, 401, {
      errcode: RELAY_ERRCODE.signInRequired,
      errmsg: 'sign in: send Authorization: Bearer <credential>',
    });
  }
  const verdict = await deps.auth.authenticate(tenant, token);
  if (!verdict.ok) {
    deps.refusedLog.write({ status: verdict.status, reason: verdict.reason });
    if (verdict.status === 503) deps.refusals.refund(address);
    return reply(res, verdict.status, { errcode: verdict.errcode, errmsg: verdict.reason });
  }
  deps.refusals.refund(address);
  const user = verdict.identity.user;
  const key = `${tenant}\n${user}`;
  const now = deps.monotonic();
  let bucket = deps.buckets.get(key, now);
  if (!bucket) {
    bucket = new TokenBucket(CLAIM_BURST, CLAIMS_PER_MINUTE, deps.monotonic);
    deps.buckets.set(key, bucket, now);
  }
  if (!bucket.take()) {
    res.setHeader('Retry-After', '1');
    return reply(res, 429, { errcode: 42900, errmsg: 'too many claims; retry in a second' });
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_CLAIM_BYTES)
    return reply(res, 413, { errcode: 40000, errmsg: 'request too large' });
  const raw = await readBody(req, MAX_CLAIM_BYTES);
  if (raw === 'aborted') return;
  if (raw === 'too-large') return reply(res, 413, { errcode: 40000, errmsg: 'request too large' });
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    body = null;
  }
  const callId =
    body && typeof body === 'object' ? (body as Record<string, unknown>).callId : undefined;
  if (typeof callId !== 'string' || !CALL_ID_PATTERN.test(callId))
    return reply(res, 400, {
      errcode: 40000,
      errmsg: 'send {"callId":"..."}: the call id, 1 to 128 letters, digits or . _ : @ + -',
    });
  // A claim from one of the user's computers (`device`) is that computer's: the user's other
  // computer is told it is not theirs. Without one (an older desktop), the user's.
  const device =
    body && typeof body === 'object' ? (body as Record<string, unknown>).device : undefined;
  if (device !== undefined && (typeof device !== 'string' || !CLAIM_DEVICE_PATTERN.test(device)))
    return reply(res, 400, {
      errcode: 40000,
      errmsg: 'device: 8 to 64 letters, digits, _ or -',
    });
  const claimant = device === undefined ? user : `${user}\n${device}`;
  let held: string;
  try {
    if (!deps.store.claimCall) throw new Error('this store keeps no claims');
    held = await deps.store.claimCall(tenant, callId, claimant, CLAIM_TTL_MS);
  } catch (error) {
    deps.failedLog.write({ error });
    res.setHeader('Retry-After', '1');
    return reply(res, 503, {
      errcode: 0,
      errmsg: 'the relay cannot store claims now; retry later',
    });
  }
  // The holder is named by user only (a device id is no one's business but its own).
  const holder = held.split('\n', 1)[0]!;
  const answer: CallClaimAnswer = { callId, holder, mine: held === claimant };
  reply(res, 200, answer);
}
