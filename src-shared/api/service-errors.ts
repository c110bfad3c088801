/**
 * The service's error codes, and what Screenpop says about each fault: one table of reasons and
 * remedies (docs/wire-protocol.md section 4), so that the tray, Test connection and the headless
 * runner say the same words for the same fault. The words are the catalogue's (namespace
 * `status`: status.fault.<FaultId>.reason/remedy, status.hint.<HintId>), keyed by a stable id; a
 * description carries them as phrases (`words`) for the edge to say in the user's language, and
 * in English (`reason`, `remedy`) for logs, diagnostics and the runner's JSON.
 *
 * Every failure of a service call is one `ServiceError` (built from an answer by
 * `api/errors.ts`, or locally by the token manager); `describeError(anything)` turns it, or any
 * other thrown value, into the words to show.
 *
 * Error text is shown in the tray and written to logs, so a message never carries a token or the
 * secret: it is built from our own words plus the server's `errmsg`, scrubbed with the
 * SecretRegistry by the caller (ServiceClient) and cut short.
 */

import { english, phrase, type PhraseValue, type Words } from '../i18n/phrase.ts';

import { ERRCODE } from './errcodes.ts';

export { ERRCODE };

/** What went wrong with a service call; decides what the token manager and the sources do. */
export type ServiceErrorKind =
  | 'credentials' // 10001: key or secret not accepted (also a refresh token not accepted)
  | 'expired' // 10002: the access token is expired or unknown
  | 'scope' // 10003: the key lacks a scope
  | 'ip' // 10004: this computer's IP is not on the key's allowlist
  | 'rate-limit' // 429 / 42900
  | 'server' // 5xx
  | 'network' // no answer: DNS, refused, reset
  | 'timeout' // no answer within our per-request time-out
  | 'bad-request' // 400 / 40000: our request was malformed
  | 'unsupported' // the phone system's API is off, or not one we speak: a person must fix it
  | 'protocol' // an answer we cannot understand (not JSON, missing fields)
  | 'not-service' // the address answers, but never as the phone system's API (another web server)
  | 'proxy' // the proxy refused us (407 credentials, 403 policy): a person must fix it
  | 'certificate' // the server's TLS certificate is not trusted, expired or for another host
  | 'sign-in'; // organisation mode: the relay or the sign-in provider refused who we are

/** The faults Screenpop has words for. */
export type FaultId =
  | 'invalid-credentials'
  | 'token-expired'
  | 'insufficient-scope'
  | 'ip-not-allowed'
  | 'bad-request'
  | 'rate-limited'
  | 'server'
  | 'network'
  | 'timeout'
  | 'protocol'
  | 'not-phone-system'
  | 'unknown-errcode'
  | 'no-credentials'
  | 'not-signed-in'
  | 'sign-in-expired'
  | 'not-enrolled'
  | 'enrolment-refused'
  | 'access-revoked'
  | 'not-mapped'
  | 'other-account'
  | 'keychain-unreadable'
  // The keychain's own troubles, each with its remedy per OS (KeychainUnavailableError).
  | 'keychain-not-installed'
  | 'keychain-library-missing'
  | 'keychain-no-service'
  | 'keychain-refused'
  | 'proxy-unreachable'
  | 'proxy-dropped'
  | 'proxy-timeout'
  | 'proxy-auth'
  // Negotiate / NTLM (src-shared/net/proxy-auth.ts): refused after the handshake (the proxy's
  // words), the user's Kerberos ticket missing or expired, no scheme offered that we can answer.
  | 'proxy-auth-refused'
  | 'proxy-auth-ticket'
  | 'proxy-auth-unavailable'
  | 'proxy-refused'
  | 'certificate-untrusted'
  | 'certificate-expired'
  | 'certificate-host'
  | 'api-unavailable'
  // Yeastar P-Series (docs/phone-systems/yeastar-p-series.md section 6), in its own terms.
  | 'ys-credentials'
  | 'ys-api-off'
  | 'ys-api-version'
  | 'ys-access-denied'
  | 'ys-ip-blocked'
  | 'ys-ip-forbidden'
  // One API application, many computers (docs/phone-systems/yeastar-p-series.md section 2): the
  // phone system's token limit, and sign-ins held by src-shared/api/sign-in-guard.ts.
  | 'ys-token-limit'
  | 'ys-token-limit-likely'
  | 'shared-application'
  | 'sign-ins-held'
  // The standard profile pointed at a Yeastar P-Series PBX (its answers are Yeastar's own).
  | 'looks-like-yeastar'
  // A service address with a path under which the host has no API (HTTP 404).
  | 'base-url-path'
  // No connection to the service or the relay, naming its host, port and what happened.
  | 'unreachable'
  | 'unexpected';

export interface FaultWords {
  /** What happened, in plain words (English: logs, JSON; `words` says it in any language). */
  reason: string;
  /** What the user does about it (or that Screenpop deals with it by itself). */
  remedy: string;
}

/** Sentences added to a fault's words where more is known about it. */
export type HintId =
  | 'scope-extension-list'
  | 'scope-events'
  | 'scope-no-call-events'
  | 'scope-missing'
  | 'scope-feature-off'
  | 'ip-reported'
  | 'ip-same-network'
  | 'ip-outbound'
  | 'ip-private'
  | 'ip-unknown';

/** A fault's reason and remedy as phrases of the catalogue (status.fault.<id>.*). */
export function faultWords(
  fault: FaultId,
  values?: Readonly<Record<string, string | number>>,
): { reason: Words; remedy: Words } {
  return {
    reason: [phrase(`status.fault.${fault}.reason`, values)],
    remedy: [phrase(`status.fault.${fault}.remedy`, values)],
  };
}

/** A hint as a phrase (status.hint.<id>). */
export function hintPhrase(id: HintId, values?: Readonly<Record<string, PhraseValue>>) {
  return phrase(`status.hint.${id}`, values);
}

/** A hint's sentence in English, its values filled in. */
export function hint(id: HintId, values?: Readonly<Record<string, PhraseValue>>): string {
  return english([hintPhrase(id, values)]);
}

const KIND_BY_ERRCODE: ReadonlyMap<number, ServiceErrorKind> = new Map<number, ServiceErrorKind>([
  [ERRCODE.invalidCredentials, 'credentials'],
  [ERRCODE.tokenExpired, 'expired'],
  [ERRCODE.insufficientScope, 'scope'],
  [ERRCODE.ipNotAllowed, 'ip'],
  [ERRCODE.badRequest, 'bad-request'],
  [ERRCODE.rateLimited, 'rate-limit'],
]);

/**
 * The service's `{"errcode": N, "errmsg": "..."}` in an answer's body (JSON text, or already
 * parsed), or undefined when the body carries no integer errcode.
 */
export function readErrcode(body: unknown): { errcode: number; errmsg?: string } | undefined {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { errcode, errmsg } = value as { errcode?: unknown; errmsg?: unknown };
  if (typeof errcode !== 'number' || !Number.isInteger(errcode)) return undefined;
  return typeof errmsg === 'string' ? { errcode, errmsg } : { errcode };
}

/** What an errcode means: its kind (what the app does), and the words when not the kind's own. */
export interface ErrcodeMeaning {
  kind: ServiceErrorKind;
  fault?: FaultId;
}

/**
 * Reads a phone system's errcodes: each system has its own table (10004 is "IP not allowed" on the
 * standard service and "token expired" on Yeastar's), so every reader of an errcode takes one.
 * What else is known of the answer comes as one `ErrcodeContext`.
 */
export type ErrcodeReader = (
  errcode: number,
  context?: ErrcodeContext,
) => ErrcodeMeaning | undefined;

/** What is known of the answer that carried an errcode, each part when it was there. */
export interface ErrcodeContext {
  /** The API call that answered (some codes mean different things on get_token). */
  operation?: string;
  /** The answer's status, when it came in an HTTP answer. */
  httpStatus?: number;
  /** The answer's own text. */
  errmsg?: string;
}

/**
 * Answers only a Yeastar P-Series PBX gives: an errcode with Yeastar's own errmsg for it
 * (docs/phone-systems/yeastar-p-series.md section 6, from Yeastar's *Error Code and Error
 * Message*). Several of these codes mean something else on the standard service (10004 is "TOKEN
 * EXPIRED" there and "IP not allowed" here; 10001 "INTERFACE NOT EXISTED" and not a refused key),
 * and the two speak the same paths (/openapi/v1.0/) and answer get_token alike: with the standard
 * profile pointed at such a PBX, the pair is what tells it, and it is said as such rather than read
 * as the standard service's code.
 */
const YEASTAR_ANSWERS: ReadonlyMap<number, string> = new Map([
  [-1, 'FAILURE'],
  [10001, 'INTERFACE NOT EXISTED'],
  [10004, 'TOKEN EXPIRED'],
  [10005, 'ACCESS DENIED'],
  [70004, 'ACCOUNT IP BLOCKED'],
  [70087, 'IP FORBIDDEN'],
]);

/** The standard service's table (docs/wire-protocol.md section 4), and Yeastar's answers told apart. */
export const standardErrcodes: ErrcodeReader = (errcode, { errmsg } = {}) => {
  if (errmsg !== undefined && YEASTAR_ANSWERS.get(errcode) === errmsg.trim().toUpperCase())
    return { kind: 'unsupported', fault: 'looks-like-yeastar' };
  const kind = KIND_BY_ERRCODE.get(errcode);
  return kind ? { kind } : undefined;
};

const FAULT_BY_KIND: Readonly<Record<ServiceErrorKind, FaultId>> = {
  credentials: 'invalid-credentials',
  expired: 'token-expired',
  scope: 'insufficient-scope',
  ip: 'ip-not-allowed',
  'rate-limit': 'rate-limited',
  server: 'server',
  network: 'network',
  timeout: 'timeout',
  'bad-request': 'bad-request',
  protocol: 'protocol',
  'not-service': 'not-phone-system',
  proxy: 'proxy-refused',
  certificate: 'certificate-untrusted',
  'sign-in': 'sign-in-expired',
  unsupported: 'api-unavailable',
};

/** Kinds a person must fix (the key, its scopes, the allowlist): no retry until they act. */
const NEEDS_USER: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'credentials',
  'scope',
  'ip',
  'unsupported',
  // Neither fixes itself by retrying; a silent retry loop would only hide it.
  'proxy',
  'certificate',
  // A wrong service address (another web server) answers the same way every time.
  'not-service',
  // Signing in again, enrolling again or an administrator's change: nothing a retry does.
  'sign-in',
]);

/** True for kinds a person must fix; retrying by ourselves would only get an IP blocked. */
export function needsUser(kind: ServiceErrorKind): boolean {
  return NEEDS_USER.has(kind);
}

/**
 * After a refresh_token call failed: true when the refresh token itself was refused (10002, a
 * refused key, a malformed request), so that exchanging the key and secret again is the remedy.
 * Passing trouble (network, time-out, 5xx, 429) and an address refusal would meet get_token the
 * same way: no login is added on top (repeated logins can get an IP blocked). The desktop's token
 * manager and the gateway relay's tokens both follow this one rule.
 */
export function refreshRefused(err: unknown): err is ServiceError {
  return isServiceError(err) && err.kind !== 'ip' && (!err.retryable || err.kind === 'expired');
}

/**
 * True when a request found the service gone (no answer, reset, time-out, a 5xx): it may be
 * restarting, which forgets every token (token-lifecycle.ts `connectionLost`).
 */
export function serviceLost(err: unknown): boolean {
  return isServiceError(err) && LOST.has(err.kind);
}
const LOST: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'server',
  'network',
  'timeout',
]);

/** Kinds where the same request may succeed later without anyone changing anything. */
const RETRYABLE: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'expired',
  'rate-limit',
  'server',
  'network',
  'timeout',
  // An answer we cannot read is usually a captive portal or a proxy page: worth trying later.
  'protocol',
]);

export interface ServiceErrorInit {
  kind: ServiceErrorKind;
  message: string;
  errcode?: number;
  httpStatus?: number;
  /** Which words describe it; by default those of its kind. */
  fault?: FaultId;
  retryAfterMs?: number;
  cause?: unknown;
  /** Values for the words' `{name}` placeholders (the host, the proxy), never secrets. */
  values?: Readonly<Record<string, string>>;
}

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly fault: FaultId;
  readonly errcode?: number;
  readonly httpStatus?: number;
  readonly retryAfterMs?: number;
  readonly retryable: boolean;
  readonly values?: Readonly<Record<string, string>>;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.kind = init.kind;
    this.fault = init.fault ?? FAULT_BY_KIND[init.kind];
    if (init.errcode !== undefined) this.errcode = init.errcode;
    if (init.httpStatus !== undefined) this.httpStatus = init.httpStatus;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    this.retryable = RETRYABLE.has(init.kind);
    if (init.values !== undefined) this.values = init.values;
  }

  /** What the user does about it, in plain words (the same as `describeError(this).remedy`). */
  get remedy(): string {
    return describeError(this).remedy;
  }

  /** The same error with its message passed through `scrub` (e.g. SecretRegistry.scrub). */
  scrubbed(scrub: (text: string) => string): ServiceError {
    const message = scrub(this.message);
    if (message === this.message) return this;
    return new ServiceError({
      kind: this.kind,
      message,
      fault: this.fault,
      ...(this.errcode !== undefined && { errcode: this.errcode }),
      ...(this.httpStatus !== undefined && { httpStatus: this.httpStatus }),
      ...(this.retryAfterMs !== undefined && { retryAfterMs: this.retryAfterMs }),
      ...(this.values !== undefined && { values: this.values }),
    });
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** A fault in the words the user sees, with what a program needs to act on it. */
export interface ErrorDescription extends FaultWords {
  fault: FaultId;
  /** The same reason and remedy as phrases, for the edge to say in the user's language. */
  words: { reason: Words; remedy: Words };
  /** The service's errcode, when the service gave one. */
  errcode?: number;
  /** A person must act (fix the key, a scope, the allowlist, the keychain); retrying will not help. */
  needsUser: boolean;
}

/**
 * The words for an errcode the service sent (in an answer, a frame, a refused handshake), read
 * through the phone system's table (the standard service's by default), with its errmsg if any.
 */
export function describeErrcode(
  errcode: number,
  read: ErrcodeReader = standardErrcodes,
  errmsg?: string,
): ErrorDescription {
  return describeMeaning(read(errcode, { errmsg }), errcode);
}

/** The words for what a phone system's errcode (or a refusal without one) means. */
export function describeMeaning(
  meaning: ErrcodeMeaning | undefined,
  errcode?: number,
): ErrorDescription {
  const fault = meaning ? (meaning.fault ?? FAULT_BY_KIND[meaning.kind]) : 'unknown-errcode';
  return {
    fault,
    ...said(faultWords(fault, errcode !== undefined ? { errcode: String(errcode) } : {})),
    ...(errcode !== undefined && { errcode }),
    needsUser: meaning !== undefined && needsUser(meaning.kind),
  };
}

/**
 * Anything thrown or rejected, in the words the user sees: a ServiceError by its fault (and its
 * errcode when the service gave one), anything else as an unexpected error (a bug, logged where
 * it happened).
 */
export function describeError(error: unknown): ErrorDescription {
  if (!isServiceError(error)) {
    return { fault: 'unexpected', ...said(faultWords('unexpected')), needsUser: false };
  }
  const values: Record<string, string | number> = {
    ...error.values,
    // A code, not a quantity: "10001", never "10,001".
    ...(error.errcode !== undefined && { errcode: String(error.errcode) }),
  };
  return {
    fault: error.fault,
    ...said(faultWords(error.fault, values)),
    ...(error.errcode !== undefined && { errcode: error.errcode }),
    needsUser: needsUser(error.kind),
  };
}

/** Phrases with their English rendering beside them (what logs and JSON carry). */
function said(words: { reason: Words; remedy: Words }) {
  return { reason: english(words.reason), remedy: english(words.remedy), words };
}
