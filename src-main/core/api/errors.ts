/**
 * Typed service errors. Every failure of a service call (an errcode, an HTTP status without a JSON
 * body, a broken connection, a time-out, a malformed answer) becomes one ServiceError whose `kind`
 * tells the token manager and the UI what to do, and whose `remedy` tells the user, in plain words.
 *
 * Error text is shown in the tray and written to logs, so it never carries a token or the secret:
 * the message is built from our own words plus the server's `errmsg`, scrubbed with the
 * SecretRegistry by the caller (ServiceClient) and cut short.
 */
import { oneLine } from './plain-text.ts';

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
  | 'protocol'; // an answer we cannot understand (not JSON, missing fields)

export const ERRCODE = {
  ok: 0,
  invalidCredentials: 10001,
  tokenExpired: 10002,
  insufficientScope: 10003,
  ipNotAllowed: 10004,
  badRequest: 40000,
  rateLimited: 42900,
} as const;

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
  remedy?: string;
  retryAfterMs?: number;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly errcode?: number;
  readonly httpStatus?: number;
  readonly remedy: string;
  readonly retryAfterMs?: number;
  readonly retryable: boolean;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.kind = init.kind;
    if (init.errcode !== undefined) this.errcode = init.errcode;
    if (init.httpStatus !== undefined) this.httpStatus = init.httpStatus;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    this.remedy = init.remedy ?? remedyForKind(init.kind);
    this.retryable = RETRYABLE.has(init.kind);
  }

  /** The same error with its message passed through `scrub` (e.g. SecretRegistry.scrub). */
  scrubbed(scrub: (text: string) => string): ServiceError {
    const message = scrub(this.message);
    if (message === this.message) return this;
    return new ServiceError({
      kind: this.kind,
      message,
      remedy: this.remedy,
      ...(this.errcode !== undefined && { errcode: this.errcode }),
      ...(this.httpStatus !== undefined && { httpStatus: this.httpStatus }),
      ...(this.retryAfterMs !== undefined && { retryAfterMs: this.retryAfterMs }),
    });
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** The remedy (docs/wire-protocol.md section 4) for an errcode, in words a user can act on. */
export function remedyFor(errcode: number): string {
  switch (errcode) {
    case ERRCODE.invalidCredentials:
      return (
        'The API key or secret was not accepted. Check that both were copied exactly from the ' +
        "admin console's API integrations page. If the secret is lost, regenerate the key there " +
        'and enter the new key and secret in Screenpop.'
      );
    case ERRCODE.tokenExpired:
      return (
        'The access token has expired; Screenpop refreshes it by itself. If this keeps happening, ' +
        "check that this computer's date and time are correct."
      );
    case ERRCODE.insufficientScope:
      return (
        'The API key lacks a permission (scope) this needs. In the admin console, edit the API ' +
        'key and grant the missing scope (extension list, call events).'
      );
    case ERRCODE.ipNotAllowed:
      return (
        "This computer's IP address is not on the API key's allowlist. In the admin console, " +
        "edit the API key and add this computer's IP address to its allowlist."
      );
    case ERRCODE.badRequest:
      return 'The service rejected a request from Screenpop as malformed. Update Screenpop; if it persists, report it.';
    case ERRCODE.rateLimited:
      return 'The service is limiting requests. Screenpop waits and tries again by itself.';
    default:
      return `The service answered with error code ${errcode}. Screenpop tries again later; if it persists, contact the service's administrator.`;
  }
}

function remedyForKind(kind: ServiceErrorKind): string {
  switch (kind) {
    case 'credentials':
      return remedyFor(ERRCODE.invalidCredentials);
    case 'expired':
      return remedyFor(ERRCODE.tokenExpired);
    case 'scope':
      return remedyFor(ERRCODE.insufficientScope);
    case 'ip':
      return remedyFor(ERRCODE.ipNotAllowed);
    case 'rate-limit':
      return remedyFor(ERRCODE.rateLimited);
    case 'bad-request':
      return remedyFor(ERRCODE.badRequest);
    case 'server':
      return 'The service is having trouble. Screenpop tries again by itself.';
    case 'network':
      return 'The service cannot be reached. Check the network connection and the base address in Settings; Screenpop tries again by itself.';
    case 'timeout':
      return 'The service did not answer in time. Check the network connection; Screenpop tries again by itself.';
    case 'protocol':
      return 'The service gave an answer Screenpop does not understand. Check the base address in Settings (a proxy or login page may be in the way).';
  }
}

const KIND_BY_ERRCODE: ReadonlyMap<number, ServiceErrorKind> = new Map<number, ServiceErrorKind>([
  [ERRCODE.invalidCredentials, 'credentials'],
  [ERRCODE.tokenExpired, 'expired'],
  [ERRCODE.insufficientScope, 'scope'],
  [ERRCODE.ipNotAllowed, 'ip'],
  [ERRCODE.badRequest, 'bad-request'],
  [ERRCODE.rateLimited, 'rate-limit'],
]);

/** Only for answers without a JSON errcode (docs/wire-protocol.md section 4: errcode decides first). */
function kindForStatus(status: number): ServiceErrorKind {
  if (status === 401) return 'credentials';
  if (status === 403) return 'ip';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate-limit';
  if (status >= 500) return 'server';
  if (status >= 400) return 'bad-request';
  // A 2xx/3xx that is not the JSON we expect: a proxy, a captive portal, a wrong base address.
  return 'protocol';
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerValue(headers: HeaderSource | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function')
    return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  for (const [k, v] of Object.entries(record)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/** Longest Retry-After we obey; a broken server must not park the app for days. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3), in ms from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

function errcodeOf(body: unknown): { errcode: number; errmsg?: string } | undefined {
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

export interface ErrorContext {
  /** What we were doing, e.g. 'get_token'; starts the message. */
  operation?: string;
  /** Wall-clock now, for an HTTP-date Retry-After. */
  now?: number;
}

/**
 * The ServiceError for a non-success answer. Decides on `errcode` when the body is JSON carrying one
 * (docs/wire-protocol.md section 4), and on the HTTP status only when it does not (a proxy's HTML page, an
 * empty body).
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers?: HeaderSource,
  context: ErrorContext = {},
): ServiceError {
  const prefix = context.operation ? `${context.operation}: ` : '';
  const retryAfterMs = parseRetryAfter(
    headerValue(headers, 'retry-after'),
    context.now ?? Date.now(),
  );
  const parsed = errcodeOf(body);
  const extra = {
    httpStatus: status,
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  };
  if (parsed && parsed.errcode !== ERRCODE.ok) {
    const known = KIND_BY_ERRCODE.get(parsed.errcode);
    const kind = known ?? (status >= 400 ? kindForStatus(status) : 'server');
    const detail = parsed.errmsg ? ` (${oneLine(parsed.errmsg, 120)})` : '';
    return new ServiceError({
      kind,
      message: `${prefix}the service answered errcode ${parsed.errcode}${detail}, HTTP ${status}`,
      errcode: parsed.errcode,
      remedy: remedyFor(parsed.errcode),
      ...extra,
    });
  }
  const kind = kindForStatus(status);
  const what = parsed ? 'errcode 0' : 'no errcode in its body';
  return new ServiceError({
    kind,
    message: `${prefix}the service answered HTTP ${status} with ${what}`,
    ...extra,
  });
}
