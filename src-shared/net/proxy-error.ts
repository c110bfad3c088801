/**
 * A failure of the HTTP CONNECT tunnel through a forward proxy (src-shared/net/tunnel.ts), naming
 * the proxy's host and port and never its credentials. Here so that the shared service client's
 * words for network faults (net-errors.ts) can recognise it.
 */
export type ProxyFailure =
  /** The proxy itself cannot be reached (refused, unknown host, no connection). */
  | 'unreachable'
  /**
   * The proxy took the connection and then ended it without an answer (closed, reset), or answered
   * something that is not HTTP: no decision of the proxy's, so worth trying again later.
   */
  | 'dropped'
  /** The proxy had not finished its answer when the CONNECT's deadline passed (it drips or stalls). */
  | 'timeout'
  /** 407 (or 401): the proxy wants (other) credentials. */
  | 'auth'
  /** The proxy's explicit refusal of the CONNECT (403 by policy, 502/504 the target unreachable from it). */
  | 'refused';

export type ProxyAuthProblem = 'refused' | 'ticket' | 'unavailable';

export class ProxyError extends Error {
  readonly failure: ProxyFailure;
  /** `host:port` of the proxy. */
  readonly proxy: string;
  /** The proxy's HTTP status for a refused CONNECT. */
  readonly status?: number;
  /** The OS error code when the proxy could not be reached (ECONNREFUSED, ENOTFOUND, ...). */
  readonly code: string;
  /**
   * For `auth`: the proxy refused the credentials sent (`refused`), the user's Kerberos ticket is
   * missing or expired (`ticket`: sign in again), or no scheme it offers can be answered here
   * (`unavailable`).
   */
  readonly auth?: ProxyAuthProblem;
  /** For `auth`: the scheme(s) concerned (`Negotiate`, `NTLM`, `Basic`). */
  readonly scheme?: string;
  /** For `auth`: the proxy's own words (its status line's reason phrase, printable ASCII). */
  readonly words?: string;

  constructor(
    failure: ProxyFailure,
    proxy: string,
    message: string,
    detail: {
      status?: number;
      code?: string;
      auth?: ProxyAuthProblem;
      scheme?: string;
      words?: string;
    } = {},
  ) {
    super(message);
    this.name = 'ProxyError';
    this.failure = failure;
    this.proxy = proxy;
    if (detail.status !== undefined) this.status = detail.status;
    this.code = detail.code ?? `EPROXY_${failure.toUpperCase()}`;
    if (detail.auth !== undefined) this.auth = detail.auth;
    if (detail.scheme !== undefined) this.scheme = detail.scheme;
    if (detail.words !== undefined) this.words = detail.words;
  }
}
