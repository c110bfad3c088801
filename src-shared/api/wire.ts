/**
 * Validation of the service's JSON answers at the boundary (docs/wire-protocol.md sections 2
 * and 3). Everything past this file handles typed values only. Errors name the
 * offending field, never its value (the value may be a token).
 */
import { ServiceError } from './service-errors.ts';
import { previewText } from '../ui/text.ts';
import { canonicalEmail } from '../rules/email-address.ts';

/** A token pair with lifetimes turned into wall-clock deadlines (ms since the epoch). */
export interface TokenPair {
  accessToken: string;
  accessExpiresAt: number;
  refreshToken: string;
  refreshExpiresAt: number;
}

/** One entry of the extension list. Fields we do not use are dropped here. */
export interface Extension {
  number: string;
  callerIdName: string;
  /**
   * `email_addr` as the phone system holds it (trimmed), when it is an address canonicalEmail
   * takes (src-shared/rules/email-address.ts); the relay maps sign-ins by it, compared by that function.
   */
  email?: string;
}

export interface ExtensionPage {
  extensions: Extension[];
  /** `total_number`, when the server sent a usable one. */
  total?: number;
  /** How many entries the page carried, including ones we skipped as unusable. */
  received: number;
}

type Json = Record<string, unknown>;

export function protocolError(operation: string, problem: string): ServiceError {
  return new ServiceError({ kind: 'protocol', message: `${operation}: ${problem}` });
}

export function asObject(value: unknown, operation: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw protocolError(operation, 'the answer is not a JSON object');
  }
  return value as Json;
}

function requireToken(body: Json, field: string, operation: string): string {
  const v = body[field];
  if (typeof v !== 'string' || v.length === 0) {
    throw protocolError(
      operation,
      `the answer lacks a usable "${field}" (expected a non-empty string)`,
    );
  }
  return v;
}

/**
 * Lifetimes beyond this are taken as this. Deadlines further out would reach timers (token refresh,
 * socket rotation) that Node cannot hold: a setTimeout beyond 2^31-1 ms (~24.8 days) fires after
 * 1 ms, which turned the refresh timer into a loop of refresh_token requests. Renewing a long-lived
 * token early costs nothing.
 */
export const MAX_LIFETIME_SEC = 7 * 24 * 3600;

/**
 * A lifetime in seconds. The service says 1800 and 86400; anything positive and finite is accepted,
 * capped at MAX_LIFETIME_SEC.
 */
function requireLifetime(body: Json, field: string, operation: string): number {
  const v = body[field];
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) {
    throw protocolError(
      operation,
      `the answer lacks a usable "${field}" (expected a positive number of seconds)`,
    );
  }
  return Math.min(n, MAX_LIFETIME_SEC);
}

/**
 * The token pair of get_token / refresh_token. `issuedAt` is the wall-clock time at which the request
 * was SENT: the server started the lifetimes after that, so deadlines computed from it are never
 * later than the real ones.
 *
 * refresh_token's answer is our decision (docs/wire-protocol.md section 2); when it carries no new refresh token we keep
 * using `previousRefresh` (the one we sent, with its original deadline).
 */
export function parseTokenPair(
  body: unknown,
  issuedAt: number,
  operation: string,
  previousRefresh?: { token: string; expiresAt: number },
): TokenPair {
  const obj = asObject(body, operation);
  const accessToken = requireToken(obj, 'access_token', operation);
  const accessLife = requireLifetime(obj, 'access_token_expire_time', operation);
  let refreshToken: string;
  let refreshExpiresAt: number;
  if (
    previousRefresh &&
    obj.refresh_token === undefined &&
    obj.refresh_token_expire_time === undefined
  ) {
    refreshToken = previousRefresh.token;
    refreshExpiresAt = previousRefresh.expiresAt;
  } else {
    refreshToken = requireToken(obj, 'refresh_token', operation);
    refreshExpiresAt =
      issuedAt + requireLifetime(obj, 'refresh_token_expire_time', operation) * 1000;
  }
  return {
    accessToken,
    accessExpiresAt: issuedAt + accessLife * 1000,
    refreshToken,
    refreshExpiresAt,
  };
}

/** Just the token strings an answer carries, to register them as secrets before validating it. */
export function tokenStringsIn(body: unknown): string[] {
  if (body === null || typeof body !== 'object') return [];
  const obj = body as Json;
  return [obj.access_token, obj.refresh_token].filter((v): v is string => typeof v === 'string');
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * One page of extension/list. Tolerant (docs/wire-protocol.md section 3): missing or extra fields are fine;
 * an entry without a usable `number` is skipped; a missing `caller_id_name` becomes ''.
 */
export function parseExtensionPage(body: unknown, operation: string): ExtensionPage {
  const obj = asObject(body, operation);
  const data = obj.data ?? [];
  if (!Array.isArray(data)) throw protocolError(operation, 'the answer\'s "data" is not a list');
  const extensions: Extension[] = [];
  for (const entry of data) {
    if (entry === null || typeof entry !== 'object') continue;
    const e = entry as Json;
    const number = text(e.number)?.trim();
    if (!number) continue;
    // Not lower-cased here: toLowerCase() folds the Kelvin sign into k; the relay compares
    // addresses with canonicalEmail (src-shared/rules/email-address.ts).
    const email = text(e.email_addr)?.trim();
    extensions.push({
      number,
      callerIdName: previewText(e.caller_id_name, 200),
      ...(email && canonicalEmail(email) !== null && { email }),
    });
  }
  const total = text(obj.total_number);
  const totalNumber = total !== undefined && /^\d+$/.test(total) ? Number(total) : undefined;
  return {
    extensions,
    received: data.length,
    ...(totalNumber !== undefined && { total: totalNumber }),
  };
}
