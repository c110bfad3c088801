/**
 * The small part of WHATWG fetch that our services are called with (method, headers, a string
 * body, an AbortSignal, `redirect: 'error'`), over node:http(s) with the caller's agents, answering
 * with a LeanResponse (lean-response.ts): Node's own fetch (undici, loaded on first use) cost a
 * runner ~17 MB and the relay ~16 MiB of resident memory at its first token check (issue 24). A
 * failure rejects like fetch does: a TypeError whose `cause` is the socket's error (an AbortError
 * as it is). Redirects are not followed (a 3xx is answered as it is, or refused with
 * `redirect: 'error'`). The body is read whole, up to `maxBodyBytes`.
 *
 * Used by the one transport (src-shared/net/transport.ts: proxy, trust), which the app, the runner
 * and the relay (src-relay/outbound.ts) make every request with.
 */
import http from 'node:http';
import https from 'node:https';
import { LeanHeaders, LeanResponse } from './lean-response.ts';

export interface LeanFetchOptions {
  /** The agent for a request: an https one for https: URLs. */
  agentFor(secure: boolean): http.Agent;
  /** More options of a request with a signal (the transport's tunnel abandons with it). */
  withSignal?(signal: AbortSignal): object;
  /** A body above this is cut off as an error. */
  maxBodyBytes: number;
}

export function leanFetch(
  input: string | URL | Request,
  init: RequestInit,
  options: LeanFetchOptions,
): Promise<Response> {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:')
    return Promise.reject(new TypeError(`fetch: unsupported protocol ${url.protocol}`));
  if (init.body != null && typeof init.body !== 'string')
    return Promise.reject(new TypeError('fetch: only string bodies are supported'));
  const headers: Record<string, string> = {};
  for (const [name, value] of new LeanHeaders(init.headers)) headers[name] = value;
  const body = init.body ?? undefined;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const { maxBodyBytes } = options;
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      url,
      {
        method: init.method ?? 'GET',
        headers,
        agent: options.agentFor(secure),
        ...(init.signal && { signal: init.signal, ...options.withSignal?.(init.signal) }),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (init.redirect === 'error' && status >= 300 && status < 400) {
          res.destroy();
          reject(
            new TypeError('fetch failed', { cause: new Error(`redirected (HTTP ${status})`) }),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBodyBytes) {
            res.destroy(new Error(`the answer is larger than ${maxBodyBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.once('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
        res.once('end', () => {
          const empty = status === 204 || status === 205 || status === 304;
          try {
            const responseHeaders = new LeanHeaders();
            for (const [name, value] of Object.entries(res.headers)) {
              for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
                responseHeaders.append(name, v);
            }
            resolve(
              new LeanResponse(empty ? null : Buffer.concat(chunks), {
                status,
                statusText: res.statusMessage ?? '',
                headers: responseHeaders,
                url: url.href,
              }),
            );
          } catch (error) {
            // A status Response refuses (above 599), or a header fetch refuses: a failed fetch.
            reject(new TypeError('fetch failed', { cause: error }));
          }
        });
      },
    );
    req.once('error', (error) =>
      reject(error.name === 'AbortError' ? error : new TypeError('fetch failed', { cause: error })),
    );
    req.end(body);
  });
}
