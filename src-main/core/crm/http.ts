/**
 * One HTTPS exchange with a CRM, for both connectors: through the app's one transport (its `fetch`:
 * the proxy and the trusted CAs), no redirects followed (a CRM that redirects an API call is
 * misconfigured, and a redirect could carry the token elsewhere), a bounded JSON body, and every
 * failure a CrmError with a kind the user can act on.
 */
import { parseJson } from '../../../src-shared/files/json-text.ts';
import { networkFault } from '../../../src-shared/net/net-errors.ts';
import { CrmError, type CrmCertificateProblem } from './connector.ts';

function isCertificateFault(fault: string): fault is CrmCertificateProblem['fault'] {
  return ['certificate-untrusted', 'certificate-expired', 'certificate-host'].includes(fault);
}

/** A CRM's answer about one number is small; anything larger is not an answer we read. */
export const MAX_ANSWER_BYTES = 256 * 1024;

export interface JsonResponse {
  status: number;
  headers: Headers;
  /** The parsed body; undefined when it was empty or not JSON. */
  body: unknown;
}

/** The AbortSignal's reason when the lookup's time-out fired (lookup.ts aborts with it). */
export const TIMED_OUT = 'crm lookup timed out';

export async function exchangeJson(
  fetchFn: typeof fetch,
  url: string,
  init: { method: 'GET' | 'POST' | 'PATCH'; headers: Record<string, string>; body?: string },
  signal: AbortSignal,
): Promise<JsonResponse> {
  let response: Response;
  try {
    response = await fetchFn(url, {
      method: init.method,
      headers: { accept: 'application/json', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      redirect: 'error',
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw new CrmError('timeout', 'the CRM did not answer in time');
    // fetch's `redirect: 'error'` rejects like a network failure; the cause says it redirected.
    const cause = error instanceof Error ? error.cause : undefined;
    if (cause instanceof Error && /redirect/i.test(cause.message))
      throw new CrmError('bad-answer', 'the CRM answered with a redirect', { cause: error });
    // A refused certificate is said as the service connection says it (which refusal, which host),
    // so Test lookup can tell the user what to do instead of "could not be reached".
    const refused = networkFault(error, url, 'crm lookup');
    if (refused?.kind === 'certificate' && isCertificateFault(refused.fault))
      throw new CrmError('certificate', refused.message, {
        cause: error,
        certificate: { fault: refused.fault, host: new URL(url).host },
      });
    throw new CrmError('network', 'the CRM could not be reached', { cause: error });
  }
  if (response.status >= 300 && response.status < 400)
    throw new CrmError('bad-answer', `the CRM answered with a redirect (${response.status})`, {
      status: response.status,
    });
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel().catch(() => {});
    throw new CrmError('bad-answer', 'the CRM answer is too large', { status: response.status });
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw new CrmError('timeout', 'the CRM did not answer in time');
    throw new CrmError('network', 'the CRM answer was cut off', { cause: error });
  }
  if (text.length > MAX_ANSWER_BYTES)
    throw new CrmError('bad-answer', 'the CRM answer is too large', { status: response.status });
  const parsed = text.trim() === '' ? undefined : parseJson(text);
  return {
    status: response.status,
    headers: response.headers,
    body: parsed && parsed.ok ? parsed.value : undefined,
  };
}

/** Retry-After (RFC 9110 10.2.3): seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** The CrmError for an HTTP status that is not a success (401, 403, 429, 5xx, other 4xx). */
export function statusError(status: number, retryAfter: number | undefined): CrmError {
  if (status === 401) return new CrmError('auth', 'the CRM refused the credentials', { status });
  if (status === 403)
    return new CrmError('forbidden', 'the CRM does not allow reading contacts', { status });
  if (status === 429)
    return new CrmError('rate-limited', 'the CRM asked to slow down', {
      status,
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    });
  return new CrmError('server', `the CRM answered ${status}`, { status });
}
