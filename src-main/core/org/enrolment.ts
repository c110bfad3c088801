/**
 * Enrolment (organisation mode, docs/relay-protocol.md section 2.2): a one-time code from the
 * administrator (`relay users add|code`) is exchanged once at the relay for this device's own
 * credential, which then opens the relay's stream. The code and the credential are secrets:
 * registered with the log scrubber by the caller, never in a URL.
 */
import { networkFault, unreachableFault } from '../../../src-shared/net/net-errors.ts';
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import {
  relayEnrolPath,
  type EnrolmentAnswer,
  type RelayIdentity,
} from '../../../src-shared/relay/relay-protocol.ts';
import { ServiceError } from '../../../src-shared/api/service-errors.ts';
import { relayHttpUrl } from '../relay-client/relay-source.ts';

export async function enrolDevice(options: {
  relayUrl: string;
  tenant: string;
  code: string;
  /** What the administrator sees for this device in `relay users list`. */
  label: string;
  fetch: typeof fetch;
  secrets?: SecretRegistry;
}): Promise<EnrolmentAnswer> {
  options.secrets?.add(options.code);
  const url = relayHttpUrl(options.relayUrl, relayEnrolPath(options.tenant));
  let res: Response;
  try {
    res = await options.fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: options.code, device: options.label }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    // A proxy or certificate fault, or a socket error (the relay's host, port and what happened),
    // in their own words; else the relay was not reached.
    throw (
      networkFault(error, url, 'enrol') ??
      unreachableFault(error, url, 'enrol') ??
      new ServiceError({
        kind: 'network',
        message: `the relay ${new URL(url).host} could not be reached to enrol`,
        cause: error,
        values: { host: new URL(url).host },
      })
    );
  }
  const body = (await res.json().catch(() => null)) as Partial<EnrolmentAnswer> & {
    errmsg?: unknown;
  };
  if (res.ok && body && typeof body.credential === 'string' && isIdentity(body.identity)) {
    options.secrets?.add(body.credential);
    return {
      credential: body.credential,
      device: String(body.device ?? ''),
      identity: body.identity,
    };
  }
  if (res.status === 429)
    throw new ServiceError({
      kind: 'rate-limit',
      message: 'too many enrolment attempts',
      httpStatus: 429,
    });
  if (res.status === 400 || res.status === 401)
    throw new ServiceError({
      kind: 'sign-in',
      fault: 'enrolment-refused',
      message: 'the relay refused the enrolment code',
      httpStatus: res.status,
      values: {
        why: typeof body?.errmsg === 'string' ? body.errmsg.slice(0, 200) : `HTTP ${res.status}`,
      },
    });
  if (res.status === 404)
    throw new ServiceError({
      kind: 'sign-in',
      fault: 'enrolment-refused',
      message: 'the relay has no such tenant in organisation mode',
      httpStatus: 404,
      values: { why: `no tenant ${options.tenant} with users on this relay` },
    });
  throw new ServiceError({
    kind: res.status >= 500 ? 'server' : 'protocol',
    message: `the relay answered ${res.status} to the enrolment`,
    httpStatus: res.status,
  });
}

export function isIdentity(value: unknown): value is RelayIdentity {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string');
  return (
    typeof v.user === 'string' &&
    (v.via === 'device' || v.via === 'oidc') &&
    strings(v.extensions) &&
    strings(v.dids) &&
    (v.expiresAt === null || typeof v.expiresAt === 'number')
  );
}
