/**
 * The default `ws` socket factory over a real socket, against a tiny hand-written server: what the
 * handshake carries, and frames no real service should send (malformed, binary, oversized).
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { systemClock } from '../../src-shared/process/clock.ts';
import { EventPipeline, type Pop } from '../../src-main/core/events/pipeline.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tinyServer(onConnection: (ws: WebSocket, req: IncomingMessage) => void) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  wss.on('connection', onConnection);
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
}

const TOKEN = { value: 'secret-token-abcdef', expiresAt: Date.now() + 30 * 60_000 };

/** The source on the transport's socket factory, with a fixed token and a 1 s heartbeat; stopped after the test. */
function sourceFor(baseUrl: string, backoff?: { baseMs: number; capMs: number }) {
  const source = new WebSocketEventSource({
    baseUrl,
    tokens: { getToken: async () => TOKEN, invalidate: () => {} },
    topics: [30011],
    clock: systemClock,
    heartbeatMs: 1_000,
    createSocket: directTransport().createSocket,
    ...(backoff ? { backoff } : {}),
  });
  cleanups.push(() => source.stop());
  return source;
}

describe("the transport's socket factory over a real ws connection", () => {
  it('sends the bearer header, never the token in the URL; survives malformed, binary and oversized frames', async () => {
    const seen: { url?: string; auth?: string; ua?: string } = {};
    const ring = (id: string) =>
      JSON.stringify({
        event: 30011,
        timestamp: Date.now(),
        tenant: 't',
        event_id: id,
        data: { call_id: id, from: '+14155550123', to: '101', state: 'ringing' },
      });
    const baseUrl = await tinyServer((ws, req) => {
      seen.url = req.url;
      seen.auth = req.headers.authorization;
      seen.ua = req.headers['user-agent'];
      ws.on('message', (data) => {
        if (String(data) === 'heartbeat') return void ws.send('heartbeat response');
        ws.send('{"errcode":0,"errmsg":"SUCCESS"}');
        ws.send('{not json');
        ws.send(Buffer.from([1, 2, 3]), { binary: true });
        ws.send('{"x":"' + 'y'.repeat(100 * 1024) + '"}');
        ws.send('{"errcode":77,"errmsg":"something else"}');
        ws.send(ring('r1'));
      });
    });
    const source = sourceFor(baseUrl);
    const pipeline = new EventPipeline({
      clock: systemClock,
      user: { extensions: ['101'], dids: [], defaultRegion: 'US' },
    });
    pipeline.attach(source);
    const pops: Pop[] = [];
    pipeline.onPop((p) => pops.push(p));
    source.start();
    await waitFor(() => pops.length === 1, 'the valid ring after the junk');
    expect(seen.url).toBe('/openapi/v1.0/subscribe');
    expect(seen.auth).toBe(`Bearer ${TOKEN.value}`);
    expect(seen.ua).toMatch(/^Screenpop\//);
    expect(pipeline.stats().rejected).toMatchObject({ 'not-json': 1, oversized: 1 });
    expect(source.status().state).toBe('connected');
    await sleepReal(2_500); // heartbeats keep it alive
    expect(source.status().state).toBe('connected');
  });

  it('a frame over the 1 MiB transport cap drops that socket and it reconnects', async () => {
    let connections = 0;
    const baseUrl = await tinyServer((ws) => {
      connections++;
      const n = connections;
      ws.on('message', (data) => {
        if (String(data) === 'heartbeat') return void ws.send('heartbeat response');
        ws.send('{"errcode":0,"errmsg":"SUCCESS"}');
        if (n === 1) ws.send('x'.repeat(2 * 1024 * 1024));
      });
    });
    const source = sourceFor(baseUrl, { baseMs: 10, capMs: 50 });
    source.start();
    await waitFor(() => connections === 2 && source.status().state === 'connected', 'reconnected');
  });
});
