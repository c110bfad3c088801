/**
 * An HTTP CONNECT tunnel through a forward proxy (RFC 9110 9.3.6): a TCP connection to the proxy,
 * `CONNECT host:port`, Basic credentials when the proxy has them, and the proxy's `200` before the
 * socket is handed over (to TLS for https/wss, as is for http/ws). Failures are `ProxyError`s that
 * name the proxy's host and port and never carry its credentials.
 */
import net from 'node:net';
import type { ProxyServer } from './proxy.ts';

export type ProxyFailure =
  /** The proxy itself cannot be reached (refused, unknown host, no answer). */
  | 'unreachable'
  /** 407 (or 401): the proxy wants (other) credentials. */
  | 'auth'
  /** Any other refusal of the CONNECT (403 by policy, 502/504 the target unreachable from it). */
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

/** The proxy's answer head is small; anything larger is not a proxy speaking HTTP. */
const MAX_HEAD_BYTES = 16 * 1024;

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Opens a tunnel to `target` through `proxy`. Resolves with the connected socket once the proxy
 * answered 200; rejects with a ProxyError otherwise, or when `timeoutMs` passes first.
 */
export function openTunnel(
  proxy: ProxyServer,
  target: { host: string; port: number },
  timeoutMs: number,
): Promise<net.Socket> {
  const name = hostPort(proxy.host, proxy.port);
  const authority = hostPort(target.host, target.port);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.host, port: proxy.port });
    let head = Buffer.alloc(0);
    let settled = false;
    const fail = (error: ProxyError) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () =>
      fail(
        new ProxyError(
          'unreachable',
          name,
          `the proxy ${name} did not answer within ${Math.round(timeoutMs / 1000)} s`,
          {
            code: 'ETIMEDOUT',
          },
        ),
      ),
    );
    socket.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        new ProxyError(
          'unreachable',
          name,
          `the proxy ${name} could not be reached (${error.code ?? 'error'})`,
          {
            code: error.code ?? 'ECONNRESET',
          },
        ),
      ),
    );
    socket.once('close', () =>
      fail(
        new ProxyError(
          'refused',
          name,
          `the proxy ${name} closed the connection before answering CONNECT`,
        ),
      ),
    );
    socket.once('connect', () => {
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (proxy.auth)
        lines.push(
          `Proxy-Authorization: Basic ${Buffer.from(proxy.auth, 'utf8').toString('base64')}`,
        );
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES)
          fail(
            new ProxyError('refused', name, `the proxy ${name} sent an answer that is not HTTP`),
          );
        return;
      }
      socket.off('data', onData);
      const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
      if (status === 200) {
        const rest = head.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        settled = true;
        socket.setTimeout(0);
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
            `the proxy ${name} refused the connection to ${authority} (HTTP ${status || 'answer not understood'})`,
            { status },
          ),
        );
      }
    };
    socket.on('data', onData);
  });
}
