/**
 * ServiceClient over a real socket with Node's own fetch: the headers that really go out, and a
 * per-request time-out on the fake clock that really closes a connection to a server that never answers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { DEFAULT_USER_AGENT, ServiceClient } from '../../src-shared/api/service-client.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { waitFor } from '../../rigs/wait.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

interface Seen {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  closed: boolean;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server that records one request and answers it with `answer`, or never when `answer` is null. */
async function server(answer: { status: number; body: string } | null) {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    const entry: Seen = {
      method: req.method,
      url: req.url,
      headers: req.headers,
      body: '',
      closed: false,
    };
    seen.push(entry);
    req.on('data', (d: Buffer) => (entry.body += d.toString()));
    res.on('close', () => (entry.closed = true));
    req.on('end', () => {
      if (answer)
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, seen };
}

describe('ServiceClient over real HTTP', () => {
  it('sends User-Agent Screenpop/<version>, JSON and the secret only in the body', async () => {
    const pair = {
      errcode: 0,
      errmsg: 'SUCCESS',
      access_token: 'at_real_socket_1',
      access_token_expire_time: 1800,
      refresh_token: 'rt_real_socket_1',
      refresh_token_expire_time: 86400,
    };
    const { baseUrl, seen } = await server({ status: 200, body: JSON.stringify(pair) });
    const client = new ServiceClient({
      baseUrl,
      clock: new FakeClock(),
      fetch: directTransport().fetch,
    });
    const result = await client.getToken('sk_key', 'ss_secret_value');
    expect(result.accessToken).toBe('at_real_socket_1');
    const [req] = seen;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/openapi/v1.0/get_token');
    expect(req?.headers['user-agent']).toBe(DEFAULT_USER_AGENT);
    expect(DEFAULT_USER_AGENT).toMatch(/^Screenpop\/\d+\.\d+\.\d+/);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers.authorization).toBeUndefined();
    expect(JSON.parse(req?.body ?? '')).toEqual({
      username: 'sk_key',
      password: 'ss_secret_value',
    });
  });

  it('aborts a request the server never answers, at the time-out on the injected clock', async () => {
    const { baseUrl, seen } = await server(null);
    const clock = new FakeClock();
    const client = new ServiceClient({
      baseUrl,
      clock,
      timeoutMs: 15_000,
      fetch: directTransport().fetch,
    });
    let result: unknown;
    const p = client.listExtensions('at_token_123456').then(
      () => (result = 'resolved'),
      (err: unknown) => (result = err),
    );
    await waitFor(() => seen.length === 1, 'the request to arrive');
    await clock.advance(14_999);
    expect(result).toBeUndefined();
    await clock.advance(1);
    await p;
    expect(result).toBeInstanceOf(ServiceError);
    expect((result as ServiceError).kind).toBe('timeout');
    await waitFor(() => seen[0]!.closed, 'the connection to close');
  });

  it('turns a non-JSON 502 from a proxy into a retryable server error', async () => {
    const { baseUrl } = await server({ status: 502, body: '<html>Bad Gateway</html>' });
    const err = await new ServiceClient({
      baseUrl,
      clock: new FakeClock(),
      fetch: directTransport().fetch,
    })
      .refreshToken('rt_123456')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'server', httpStatus: 502, retryable: true });
  });
});
