/**
 * bench/sse-load-client.ts reads smee.io's event stream for bench:relay's latency figures; a message
 * it misreads would be a receipt lost or a latency wrong. A server on 127.0.0.1 writes a stream as
 * smee.io does (chunked, `id:`/`event:`/`data:` lines, the webhook's JSON inside the headers' JSON)
 * cut at awkward places.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sseLoadClient } from '../../bench/sse-load-client.ts';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A stream server as smee.io's: `ready` first; resolves with its URL and each client's response. */
async function streamServer(): Promise<{ url: string; client: Promise<http.ServerResponse> }> {
  let onClient: (res: http.ServerResponse) => void = () => {};
  const client = new Promise<http.ServerResponse>((r) => (onClient = r));
  const server = http.createServer((req, res) => {
    if (req.headers.accept !== 'text/event-stream') return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write('id: 0\nevent: ready\ndata: {}\n\n');
    onClient(res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/channel`, client };
}

const message = (id: number, n: number) =>
  `id: ${id}\ndata: {"host":"127.0.0.1","content-type":"application/json","body":{"event_id":"${n}","event":30011,"data":{"to":"100"}},"query":{},"timestamp":1}\n\n`;

describe('sse-load-client', () => {
  it('resolves on ready, then reads every event_id from chunked messages', async () => {
    const server = await streamServer();
    const got: number[] = [];
    const client = await sseLoadClient({ url: server.url, onEvent: (n) => got.push(n) });
    const res = await server.client;
    for (const n of [0, 7, 12345]) res.write(message(n + 1, n));
    res.write('id: 9\nevent: ping\ndata: {}\n\n');
    res.write(message(10, 42));
    for (let i = 0; i < 50 && got.length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([0, 7, 12345, 42]);
    client.close();
  });

  it('reads a message cut across TCP segments, one byte at a time', async () => {
    const server = await streamServer();
    const got: number[] = [];
    const client = await sseLoadClient({ url: server.url, onEvent: (n) => got.push(n) });
    const res = await server.client;
    // One chunk as smee.io writes it, sent byte by byte (each its own segment with no delay).
    const body = Buffer.from(message(2, 9876) + message(3, 5));
    const socket = res.socket!;
    socket.setNoDelay(true);
    const chunk = Buffer.concat([
      Buffer.from(`${body.length.toString(16)}\r\n`),
      body,
      Buffer.from('\r\n'),
    ]);
    for (const byte of chunk) {
      socket.write(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r));
    }
    for (let i = 0; i < 50 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([9876, 5]);
    client.close();
  });

  it('rejects a refused stream', async () => {
    const server = http.createServer((_req, res) => res.writeHead(403).end('blocked'));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/channel`;
    await expect(sseLoadClient({ url, onEvent: () => {} })).rejects.toThrow(/403/);
  });
});
