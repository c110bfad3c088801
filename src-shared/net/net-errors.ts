/**
 * Proxy and certificate failures in the words of service-errors.ts, naming the host (and the
 * proxy) they concern: a refused or unreachable proxy, an untrusted, expired or misnamed
 * certificate. Used by the service client for API calls and by both event sources for their
 * sockets, so each says the same for the same fault.
 */
import { ServiceError } from '../api/service-errors.ts';
import { ProxyError } from './proxy-error.ts';

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
  'INVALID_CA',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const WRONG_HOST = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);

function codeOf(value: unknown): string | undefined {
  const code = (value as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The error itself or its cause (fetch wraps the socket's error in a TypeError's cause). */
function candidates(error: unknown): unknown[] {
  const cause = (error as { cause?: unknown } | null | undefined)?.cause;
  return cause === undefined ? [error] : [error, cause];
}

/**
 * A ServiceError for a proxy or certificate failure reaching `url` (its host is named), or
 * undefined for any other error. `operation` starts the message (e.g. 'get_token').
 */
export function networkFault(
  error: unknown,
  url: string | URL,
  operation: string,
): ServiceError | undefined {
  const host = new URL(url).host;
  for (const e of candidates(error)) {
    if (e instanceof ProxyError) {
      const values = { host, proxy: e.proxy };
      const message = `${operation}: ${e.message}`;
      // No decision of the proxy's: it could not be reached, ended the CONNECT without an answer
      // (closed, reset, not HTTP), or did not finish its answer in time. Transient, like the
      // network: the sources retry after their back-off.
      if (e.failure === 'unreachable')
        return new ServiceError({ kind: 'network', fault: 'proxy-unreachable', message, values });
      if (e.failure === 'dropped')
        return new ServiceError({ kind: 'network', fault: 'proxy-dropped', message, values });
      if (e.failure === 'timeout')
        return new ServiceError({ kind: 'timeout', fault: 'proxy-timeout', message, values });
      // A proxy that cannot reach the server itself (502/504) is the network's fault, not a policy.
      if (e.failure === 'refused' && e.status !== undefined && e.status >= 500)
        return new ServiceError({ kind: 'network', message, values });
      if (e.failure === 'auth') return proxyAuthFault(e, message, values);
      return new ServiceError({ kind: 'proxy', fault: 'proxy-refused', message, values });
    }
    const code = codeOf(e);
    if (code === undefined) continue;
    const fault = UNTRUSTED.has(code)
      ? 'certificate-untrusted'
      : EXPIRED.has(code)
        ? 'certificate-expired'
        : WRONG_HOST.has(code)
          ? 'certificate-host'
          : undefined;
    if (fault)
      return new ServiceError({
        kind: 'certificate',
        fault,
        message: `${operation}: the TLS certificate of ${host} was refused (${code})`,
        values: { host },
      });
  }
  return undefined;
}

/**
 * A proxy's 407 in words: Basic refused keeps its words (the user name and password); a refusal
 * of Negotiate or NTLM after the handshake names the scheme and quotes the proxy; a Kerberos
 * ticket missing or expired says to sign in again; no scheme we can answer names those offered.
 */
function proxyAuthFault(
  e: ProxyError,
  message: string,
  values: { host: string; proxy: string },
): ServiceError {
  const scheme = e.scheme ?? 'Basic';
  if (e.auth === 'ticket')
    return new ServiceError({ kind: 'proxy', fault: 'proxy-auth-ticket', message, values });
  if (e.auth === 'unavailable')
    return new ServiceError({
      kind: 'proxy',
      fault: 'proxy-auth-unavailable',
      message,
      values: { ...values, scheme },
    });
  if (e.auth === 'refused' && scheme !== 'Basic') {
    const said = `HTTP ${e.status ?? 407}${e.words ? ` ${e.words}` : ''}`;
    return new ServiceError({
      kind: 'proxy',
      fault: 'proxy-auth-refused',
      message,
      values: { ...values, scheme, said },
    });
  }
  return new ServiceError({ kind: 'proxy', fault: 'proxy-auth', message, values });
}

/** What a socket error's code says happened, as the words' `{cause}` (their select keys). */
const UNREACHABLE_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'nohost',
  EAI_AGAIN: 'dns',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  ECONNRESET: 'reset',
  UND_ERR_SOCKET: 'reset',
  EPIPE: 'reset',
  EHOSTUNREACH: 'noroute',
  ENETUNREACH: 'noroute',
  EHOSTDOWN: 'noroute',
};

/**
 * A ServiceError for a service or relay that could not be reached, naming its host and port and
 * what happened (refused, no such host, no route...), from the socket error's code; undefined when
 * the error carries no code. Only the address and the code: never the URL (a Yeastar token rides
 * in its query) nor the error's text.
 */
export function unreachableFault(
  error: unknown,
  url: string | URL,
  operation: string,
): ServiceError | undefined {
  const code = candidates(error)
    .map(codeOf)
    .find((c) => c !== undefined);
  if (code === undefined) return undefined;
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' || u.protocol === 'wss:' ? '443' : '80');
  const address = `${u.hostname}:${port}`;
  const shownCode = /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'unknown';
  return new ServiceError({
    kind: 'network',
    fault: 'unreachable',
    message: `${operation}: ${address} could not be reached (${shownCode})`,
    values: { address, cause: UNREACHABLE_CAUSES[code] ?? 'other', code: shownCode },
  });
}
