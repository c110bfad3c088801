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

export class ProxyError extends Error {
  readonly failure: ProxyFailure;
  /** `host:port` of the proxy. */
  readonly proxy: string;
  /** The proxy's HTTP status for a refused CONNECT. */
  readonly status?: number;
  /** The OS error code when the proxy could not be reached (ECONNREFUSED, ENOTFOUND, ...). */
  readonly code: string;

  constructor(
    failure: ProxyFailure,
    proxy: string,
    message: string,
    detail: { status?: number; code?: string } = {},
  ) {
    super(message);
    this.name = 'ProxyError';
    this.failure = failure;
    this.proxy = proxy;
    if (detail.status !== undefined) this.status = detail.status;
    this.code = detail.code ?? `EPROXY_${failure.toUpperCase()}`;
  }
}
