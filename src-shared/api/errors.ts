/**
 * A service answer that is not a success, turned into a ServiceError (src-shared/api/service-errors.ts
 * owns the error type, the codes and the words): decided on `errcode` first, on the HTTP status only
 * when the body carries none (docs/wire-protocol.md section 4), with the server's `Retry-After`.
 */
import {
  ERRCODE,
  readErrcode,
  ServiceError,
  standardErrcodes,
  type ErrcodeReader,
  type ServiceErrorKind,
} from './service-errors.ts';
import { previewText } from '../ui/text.ts';

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
  /** Removes secrets from the server's `errmsg` (SecretRegistry.scrub), before it is shortened. */
  scrub?: (text: string) => string;
  /** The phone system's errcode table (src-shared/wire/); the standard service's by default. */
  errcodes?: ErrcodeReader;
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
    const known = (context.errcodes ?? standardErrcodes)(parsed.errcode, {
      operation: context.operation,
      httpStatus: status,
      errmsg: parsed.errmsg,
    });
    const kind = known?.kind ?? (status >= 400 ? kindForStatus(status) : 'server');
    // Scrubbed before it is cut: cut first, a secret across the cut would survive as its prefix.
    const scrub = context.scrub ?? ((text: string) => text);
    const detail = parsed.errmsg ? ` (${previewText(scrub(parsed.errmsg), 120)})` : '';
    return new ServiceError({
      kind,
      message: `${prefix}the service answered errcode ${parsed.errcode}${detail}, HTTP ${status}`,
      errcode: parsed.errcode,
      ...(known?.fault && { fault: known.fault }),
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

/** What was found at an address that is not the phone system's API (the words' `{what}`). */
export type NotServiceFinding = 'html' | 'json' | 'empty' | 'text' | 'redirect';

/** HTTP statuses that mean "no such API here" when the body carries no errcode. */
const NO_SUCH_PATH = new Set([404, 405, 410, 501]);

/**
 * True when an answer without a usable errcode says the address is not the phone system's API at
 * all: a success, a redirect, or "no such path" whose body is not the service's JSON. (A 5xx, 401,
 * 403 or 429 without errcode is a server or a proxy in trouble: those keep their kinds.)
 */
export function isNotServiceStatus(status: number): boolean {
  return (status >= 200 && status < 400) || NO_SUCH_PATH.has(status);
}

/** The text of an HTML page's <title>, one short printable line ('' when there is none). */
export function pageTitle(html: string): string {
  const match = /<title[^>]*>([^<]{1,400})<\/title>/i.exec(html.slice(0, 64 * 1024));
  if (!match) return '';
  const decoded = match[1]!
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
  // Untrusted text that reaches the tray and the logs: the caller-text rule (src-shared/ui/text.ts).
  return previewText(decoded.replace(/\s+/g, ' '), 60);
}

/** What the body of such an answer is. */
export function findingOf(text: string): NotServiceFinding {
  const start = text.trimStart();
  if (!start) return 'empty';
  if (/^<(!doctype html|html|head|body|title|\?xml)|<html[\s>]/i.test(start.slice(0, 1024)))
    return 'html';
  try {
    JSON.parse(text);
    return 'json';
  } catch {
    return 'text';
  }
}

/**
 * The address answered, but not as the phone system's API (another web server, a web site, a
 * different API): a person must correct the address, so no retry loop. The words say what was
 * found there: the host, the HTTP status, a web page and its title, JSON without an errcode.
 */
export function notServiceError(
  operation: string,
  baseUrl: string,
  status: number | null,
  finding: NotServiceFinding,
  title = '',
): ServiceError {
  const host = new URL(baseUrl).host;
  const shown = {
    html: 'a web page',
    json: 'JSON without an errcode',
    empty: 'an empty answer',
    text: 'an answer that is not JSON',
    redirect: 'a redirect elsewhere',
  }[finding];
  return new ServiceError({
    kind: 'not-service',
    message: `${operation}: ${host} is not the phone system's API: HTTP ${status ?? '3xx'} with ${shown}${title ? ` titled "${title}"` : ''}`,
    ...(status !== null && { httpStatus: status }),
    values: {
      host,
      status: status === null ? '3xx' : String(status),
      what: finding,
      title: title || 'none',
    },
  });
}
