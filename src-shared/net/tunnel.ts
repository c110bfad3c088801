/**
 * An HTTP CONNECT tunnel through a forward proxy (RFC 9110 9.3.6): a TCP connection to the proxy,
 * `CONNECT host:port`, Basic credentials when the proxy has them, and the proxy's `200` before the
 * socket is handed over (to TLS for https/wss, as is for http/ws). Failures are `ProxyError`s that
 * name the proxy's host and port and never carry its credentials.
 */
import net from 'node:net';
import type { ProxyServer } from './proxy.ts';
import { ProxyError } from './proxy-error.ts';

export { ProxyError, type ProxyFailure } from './proxy-error.ts';

/** The proxy's answer head is small; anything larger is not a proxy speaking HTTP. */
const MAX_HEAD_BYTES = 16 * 1024;

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export { ABANDON_OPTION } from '../stream/ws-socket.ts';

export interface TunnelLimits {
  /**
   * The whole CONNECT (reaching the proxy, its answer's head to the last byte) must be done within
   * this many ms of the call: an absolute deadline, so that a proxy dripping its answer one byte at
   * a time cannot hold the connection for ever.
   */
  deadlineMs: number;
  /** The caller gave up (a fetch aborted, a socket closed while connecting): end the tunnel now. */
  signal?: AbortSignal | undefined;
}

/**
 * A proxy's answer head: its final status (2xx to 5xx), or undefined when it is not an HTTP/1.x
 * status line we can act on (a 1xx to a CONNECT is not one either).
 */
function statusOf(head: Buffer): number | undefined {
  const line = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
  const match = /^HTTP\/1\.[01] ([2-5]\d\d)(?: |$)/.exec(line);
  return match ? Number(match[1]) : undefined;
}

/**
 * Opens a tunnel to `target` through `proxy`. Resolves with the connected socket once the proxy
 * answered 2xx; rejects with a ProxyError otherwise or when the deadline passes first, and with an
 * AbortError when `limits.signal` aborts.
 *
 * Only the proxy's own answer (407, 403, 502, ...) is a decision of the proxy's. A connection
 * closed or reset before any answer, an answer that is not HTTP and one that does not end in time
 * are `dropped` / `timeout`: transient, like a network fault (net-errors.ts).
 */
export function openTunnel(
  proxy: ProxyServer,
  target: { host: string; port: number },
  limits: TunnelLimits,
): Promise<net.Socket> {
  const name = hostPort(proxy.host, proxy.port);
  const authority = hostPort(target.host, target.port);
  const { deadlineMs, signal } = limits;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const socket = net.connect({ host: proxy.host, port: proxy.port });
    let head = Buffer.alloc(0);
    let settled = false;
    let connected = false;
    const finish = () => {
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: Error) => {
      if (settled) return;
      finish();
      socket.destroy();
      reject(error);
    };
    const onAbort = () => fail(abortError(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(
      () =>
        fail(
          connected
            ? new ProxyError(
                'timeout',
                name,
                `the proxy ${name} did not complete its answer within ${Math.round(deadlineMs / 1000)} s`,
                { code: 'ETIMEDOUT' },
              )
            : new ProxyError(
                'unreachable',
                name,
                `the proxy ${name} could not be reached within ${Math.round(deadlineMs / 1000)} s`,
                { code: 'ETIMEDOUT' },
              ),
        ),
      deadlineMs,
    );
    socket.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        connected
          ? new ProxyError(
              'dropped',
              name,
              `the proxy ${name} ended the connection before answering CONNECT (${error.code ?? 'error'})`,
              { code: error.code ?? 'ECONNRESET' },
            )
          : new ProxyError(
              'unreachable',
              name,
              `the proxy ${name} could not be reached (${error.code ?? 'error'})`,
              { code: error.code ?? 'ECONNREFUSED' },
            ),
      ),
    );
    socket.once('close', () =>
      fail(
        new ProxyError(
          'dropped',
          name,
          `the proxy ${name} closed the connection before answering CONNECT`,
        ),
      ),
    );
    socket.once('connect', () => {
      connected = true;
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (proxy.auth)
        lines.push(
          `Proxy-Authorization: Basic ${Buffer.from(proxy.auth, 'utf8').toString('base64')}`,
        );
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    const notHttp = () =>
      new ProxyError('dropped', name, `the proxy ${name} sent an answer that is not HTTP`);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      // Known as soon as the first line is there (or cannot be one): no need to wait for more.
      if (head.length >= 9 && !/^HTTP\/1\.[01] $/.test(head.subarray(0, 9).toString('latin1'))) {
        fail(notHttp());
        return;
      }
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) fail(notHttp());
        return;
      }
      socket.off('data', onData);
      const status = statusOf(head);
      if (status === undefined) {
        fail(notHttp());
      } else if (status >= 200 && status < 300) {
        // RFC 9110 9.3.6: any 2xx answer to CONNECT means the tunnel is open.
        const rest = head.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        finish();
        socket.removeAllListeners('error');
        socket.removeAllListeners('close');
        resolve(socket);
      } else if (status === 407 || status === 401) {
        // 407 is the standard answer; some proxies (tinyproxy) answer wrong credentials with 401.
        fail(
          new ProxyError(
            'auth',
            name,
            proxy.auth
              ? `the proxy ${name} did not accept the proxy user name and password (HTTP ${status})`
              : `the proxy ${name} asks for a user name and password (HTTP ${status})`,
            { status },
          ),
        );
      } else {
        fail(
          new ProxyError(
            'refused',
            name,
            `the proxy ${name} refused the connection to ${authority} (HTTP ${status})`,
            { status },
          ),
        );
      }
    };
    socket.on('data', onData);
  });
}

/** What an aborted fetch rejects with (a DOMException named AbortError), with the signal's reason. */
function abortError(signal: AbortSignal | undefined): Error {
  const error = new Error('the connection was abandoned before the proxy answered', {
    cause: signal?.reason,
  });
  error.name = 'AbortError';
  return error;
}
