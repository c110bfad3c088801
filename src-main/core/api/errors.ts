/**
 * A service answer that is not a success, turned into a ServiceError (src-shared/service-errors.ts
 * owns the error type, the codes and the words): decided on `errcode` first, on the HTTP status only
 * when the body carries none (docs/wire-protocol.md section 4), with the server's `Retry-After`.
 */
import {
  ERRCODE,
  kindOfErrcode,
  readErrcode,
  ServiceError,
  type ServiceErrorKind,
} from '../../../src-shared/service-errors.ts';
import { oneLine } from './plain-text.ts';

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
  const parsed = readErrcode(body);
  const extra = {
    httpStatus: status,
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  };
  if (parsed && parsed.errcode !== ERRCODE.ok) {
    const known = kindOfErrcode(parsed.errcode);
    const kind = known ?? (status >= 400 ? kindForStatus(status) : 'server');
    const detail = parsed.errmsg ? ` (${oneLine(parsed.errmsg, 120)})` : '';
    return new ServiceError({
      kind,
      message: `${prefix}the service answered errcode ${parsed.errcode}${detail}, HTTP ${status}`,
      errcode: parsed.errcode,
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
