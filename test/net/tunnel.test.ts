/**
 * The CONNECT tunnel against proxies that answer in every way real ones do, each a TCP server on
 * 127.0.0.1 written from RFC 9110 9.3.6 (and from what broken middleboxes send): which answers are
 * the proxy's decision (needs a person) and which are faults to retry; the absolute deadline
 * against an answer dripped byte by byte; and a caller's abort ending a CONNECT still waiting, for
 * a fetch and for a socket through the transport.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { networkFault } from '../../src-shared/net/net-errors.ts';
import { fixedProxyResolver } from '../../src-shared/net/proxy.ts';
import { NetTransport } from '../../src-shared/net/transport.ts';
import { openTunnel, ProxyError } from '../../src-shared/net/tunnel.ts';
import { describeError } from '../../src-shared/api/service-errors.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';

type Behaviour = (socket: net.Socket) => void;

const servers: net.Server[] = [];
const accepted = new Set<net.Socket>();
afterEach(async () => {
  for (const socket of accepted) socket.destroy();
  accepted.clear();
  await Promise.all(
    servers.splice(0).map((s) => new Promise<void>((done) => s.close(() => done()))),
  );
});

/** A proxy that reads the CONNECT head and then does `behave`; `open` counts live connections. */
async function proxy(behave: Behaviour): Promise<{ port: number; open: () => number }> {
  let open = 0;
  const server = net.createServer((socket) => {
    open++;
    accepted.add(socket);
    socket.once('close', () => {
      open--;
      accepted.delete(socket);
    });
    socket.on('error', () => {});
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      behave(socket);
    };
    socket.on('data', onData);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { port: (server.address() as AddressInfo).port, open: () => open };
}

const TARGET = { host: 'service.example.com', port: 443 };

async function tunnelThrough(behave: Behaviour, deadlineMs = 5_000): Promise<unknown> {
  const { port } = await proxy(behave);
  return openTunnel({ host: '127.0.0.1', port }, TARGET, { deadlineMs }).then(
    (socket) => {
      socket.destroy();
      return 'open';
    },
    (error: unknown) => error,
  );
}

/** What the sources make of a failed tunnel: the fault's id, and whether a person must act. */
function judged(error: unknown): { fault: string; needsUser: boolean } {
  const fault = networkFault(error, 'https://service.example.com/', 'get_token');
  expect(fault, String(error)).toBeDefined();
  const { fault: id, needsUser } = describeError(fault);
  return { fault: id, needsUser };
}

function drip(text: string, everyMs: number): Behaviour {
  return (socket) => {
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      socket.write(text.charAt(i++) || 'a');
    }, everyMs);
    socket.once('close', () => clearInterval(timer));
  };
}

describe('openTunnel: what a proxy said, and what it did not', () => {
  it.each([
    ['200 Connection established', 'HTTP/1.1 200 Connection established\r\n\r\n'],
    ['any 2xx (RFC 9110 9.3.6)', 'HTTP/1.0 204 No Content\r\n\r\n'],
  ])('opens on %s', async (_what, answer) => {
    expect(await tunnelThrough((s) => s.write(answer))).toBe('open');
  });

  it.each([
    ['407', 'HTTP/1.1 407 Proxy Authentication Required\r\n\r\n', 'proxy-auth'],
    ['403 by policy', 'HTTP/1.1 403 Forbidden\r\n\r\n', 'proxy-refused'],
  ])('an explicit %s is the proxy refusing: a person must act', async (_what, answer, fault) => {
    const error = await tunnelThrough((s) => s.end(answer));
    expect(error).toBeInstanceOf(ProxyError);
    expect(judged(error)).toEqual({ fault, needsUser: true });
  });

  it.each([
    ['closed without an answer', (s: net.Socket) => s.end(), 'proxy-dropped'],
    ['reset without an answer', (s: net.Socket) => s.resetAndDestroy(), 'proxy-dropped'],
    [
      'an answer that is not HTTP',
      (s: net.Socket) => s.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'),
      'proxy-dropped',
    ],
    [
      'a status line without a status',
      (s: net.Socket) => s.end('HTTP/1.1 OK\r\n\r\n'),
      'proxy-dropped',
    ],
    [
      'an interim 100 and nothing else',
      (s: net.Socket) => s.end('HTTP/1.1 100 Continue\r\n\r\n'),
      'proxy-dropped',
    ],
    [
      'binary noise without an end of head',
      (s: net.Socket) => s.end(Buffer.alloc(32, 0xff)),
      'proxy-dropped',
    ],
    [
      'a 502 (the proxy cannot reach the server)',
      (s: net.Socket) => s.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'),
      'network',
    ],
  ] as const)('%s is a fault to retry, not a refusal', async (_what, behave, fault) => {
    const error = await tunnelThrough(behave);
    expect(error).toBeInstanceOf(ProxyError);
    expect(judged(error)).toEqual({ fault, needsUser: false });
  });

  it('a proxy that is not listening is unreachable, to retry', async () => {
    const { port } = await proxy(() => {});
    await new Promise<void>((done) => servers.pop()!.close(() => done()));
    const error = await openTunnel({ host: '127.0.0.1', port }, TARGET, {
      deadlineMs: 5_000,
    }).catch((e: unknown) => e);
    expect(judged(error)).toEqual({ fault: 'proxy-unreachable', needsUser: false });
  });

  it('gives up on an answer dripped byte by byte at its absolute deadline, and closes it', async () => {
    // One byte every 100 ms never leaves the connection idle; the deadline is 1.2 s in all.
    const { port, open } = await proxy(drip('HTTP/1.1 200 OK\r\nX-Drip: ', 100));
    const started = Date.now();
    const error = await openTunnel({ host: '127.0.0.1', port }, TARGET, {
      deadlineMs: 1_200,
    }).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).message).toBe(
      `the proxy 127.0.0.1:${port} did not complete its answer within 1 s`,
    );
    expect(judged(error)).toEqual({ fault: 'proxy-timeout', needsUser: false });
    expect(took).toBeGreaterThanOrEqual(1_100);
    await expect.poll(open, { timeout: 2_000 }).toBe(0);
  });

  it('ends a CONNECT still waiting when its signal aborts', async () => {
    const { port, open } = await proxy(() => {}); // never answers
    const abandon = new AbortController();
    const pending = openTunnel({ host: '127.0.0.1', port }, TARGET, {
      deadlineMs: 60_000,
      signal: abandon.signal,
    }).catch((e: unknown) => e);
    await expect.poll(open, { timeout: 2_000 }).toBe(1);
    abandon.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await expect.poll(open, { timeout: 2_000 }).toBe(0);
  });
});

describe('NetTransport: a caller that gives up ends the tunnel', () => {
  const transportVia = (port: number) =>
    new NetTransport({
      resolver: fixedProxyResolver({ host: '127.0.0.1', port }),
      trust: {
        caFile: 'CA file: none',
        problem: undefined,
        loaded: true,
        get: () => ({ ca: undefined, decisions: [] }),
      },
      logger: silentLogger,
      secrets: new SecretRegistry(),
    });

  it("a fetch's abort closes its pending CONNECT at the proxy", async () => {
    const { port, open } = await proxy(drip('HTTP/1.1 200 OK\r\nX-Drip: ', 200));
    const transport = transportVia(port);
    const abandon = new AbortController();
    const pending = transport
      .fetch('http://service.example.com/openapi/v1.0/get_token', { signal: abandon.signal })
      .catch((e: unknown) => e);
    await expect.poll(open, { timeout: 2_000 }).toBe(1);
    abandon.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await expect.poll(open, { timeout: 2_000 }).toBe(0);
  });

  it('a socket closed while connecting closes its pending CONNECT at the proxy', async () => {
    const { port, open } = await proxy(drip('HTTP/1.1 200 OK\r\nX-Drip: ', 200));
    const transport = transportVia(port);
    let closed = false;
    const socket = transport.createSocket(
      'ws://service.example.com/openapi/v1.0/subscribe',
      {},
      {
        open: () => {},
        message: () => {},
        rejected: () => {},
        error: () => {},
        closed: () => {
          closed = true;
        },
      },
    );
    await expect.poll(open, { timeout: 2_000 }).toBe(1);
    socket.terminate();
    await expect.poll(open, { timeout: 2_000 }).toBe(0);
    await expect.poll(() => closed, { timeout: 2_000 }).toBe(true);
  });
});
