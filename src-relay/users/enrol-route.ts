import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../src-shared/process/log.ts';
import { RELAY_ERRCODE, type EnrolmentAnswer } from '../../src-shared/relay/relay-protocol.ts';
import { reply } from '../http-reply.ts';
import type { RelayMetrics } from '../metrics.ts';
import type { RefusalBudget } from '../refusal-budget.ts';
import type { SampledLog } from '../log-sampler.ts';
import { readBody } from '../webhook-handler.ts';
import { codeHashes, newDeviceCredential, normaliseEnrolmentCode, secretHash } from './secrets.ts';
import type { UserStore } from './types.ts';
import { identityOf } from './user-auth.ts';

/** An enrolment request is a code and a device name: anything larger is not one. */
const MAX_ENROL_BYTES = 4 * 1024;

export interface EnrolDeps {
  users: UserStore;
  metrics: RelayMetrics;
  logger: Logger;
  /** Wrong codes per client address per minute (shared with nothing else). */
  refusals: RefusalBudget;
  /** The refusals' and failures' lines, sampled: anyone may cause them at the network's rate. */
  refusedLog: SampledLog;
  failedLog: SampledLog;
  now: () => number;
  /** The key codes are stored under (code-key.ts); null: plain SHA-256. */
  codeKey: string | null;
}

/**
 * POST /v1/enrol/<tenant> `{"code":"XXXX-XXXX-XXXX","device":"reception PC"}`: spends a one-time
 * enrolment code (`relay users add|code`) and answers the device's credential, once, with the
 * identity it carries (EnrolmentAnswer). The code is looked up as stored (secrets.ts `codeHashes`),
 * the credential is stored as its SHA-256 only. Each
 * request reserves one of the address's refusals before its body is read (so requests at once
 * cannot all pass before any is counted); past the budget, 429 without reading or looking up.
 * An enrolment, or a store that does not answer, gives the refusal back.
 */
export async function handleEnrol(
  req: IncomingMessage,
  res: ServerResponse,
  tenant: string,
  address: string,
  deps: EnrolDeps,
): Promise<void> {
  const { metrics } = deps;
  if (!deps.refusals.reserve(address)) {
    metrics.enrolment('rate-limited');
    res.setHeader('Retry-After', '60');
    return reply(res, 429, {
      errcode: 42900,
      errmsg: 'too many wrong codes (or enrolments at once) from this address; retry in a minute',
    });
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_ENROL_BYTES) {
    metrics.enrolment('malformed');
    return reply(res, 413, { errcode: 40000, errmsg: 'request too large' });
  }
  const raw = await readBody(req, MAX_ENROL_BYTES);
  if (raw === 'aborted') return;
  if (raw === 'too-large') {
    metrics.enrolment('malformed');
    return reply(res, 413, { errcode: 40000, errmsg: 'request too large' });
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    body = null;
  }
  const fields = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const code = typeof fields.code === 'string' ? normaliseEnrolmentCode(fields.code) : null;
  if (code === null) {
    metrics.enrolment('malformed');
    return reply(res, 400, {
      errcode: RELAY_ERRCODE.codeRefused,
      errmsg: 'send {"code":"XXXX-XXXX-XXXX"}: the code the administrator gave you',
    });
  }
  const credential = newDeviceCredential();
  let result;
  try {
    // Under the key first, then as a code issued before the key was configured.
    for (const hash of codeHashes(code, deps.codeKey)) {
      result = await deps.users.redeem(
        tenant,
        hash,
        secretHash(credential),
        deviceLabel(fields.device),
        deps.now(),
      );
      if (result.ok || result.reason !== 'unknown') break;
    }
    result = result!;
  } catch (err) {
    metrics.enrolment('storage-error');
    deps.refusals.refund(address);
    deps.failedLog.write({ tenant, error: err });
    res.setHeader('Retry-After', '5');
    return reply(res, 503, { errcode: 0, errmsg: 'the relay cannot enrol now; retry' });
  }
  if (!result.ok) {
    metrics.enrolment('code-refused');
    deps.refusedLog.write({ tenant, reason: result.reason });
    return reply(res, 401, {
      errcode: RELAY_ERRCODE.codeRefused,
      errmsg:
        result.reason === 'expired'
          ? 'this code has expired; ask your administrator for a new one'
          : 'this code is not valid (a code works once); ask your administrator for a new one',
    });
  }
  metrics.enrolment('enrolled');
  deps.refusals.refund(address);
  deps.logger.info('device enrolled', { tenant, user: result.user.name, device: result.device.id });
  const answer: EnrolmentAnswer = {
    credential,
    device: result.device.id,
    identity: identityOf(result.user, 'device', null),
  };
  reply(res, 200, answer);
}

/** What a device calls itself: one line of at most 100 printable characters. */
function deviceLabel(value: unknown): string {
  if (typeof value !== 'string') return 'device';
  // Control, zero-width and direction-changing characters would garble `relay users list`.
  // eslint-disable-next-line no-control-regex
  const unprintable = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g;
  const clean = value.replace(unprintable, '').trim();
  return clean.slice(0, 100) || 'device';
}
