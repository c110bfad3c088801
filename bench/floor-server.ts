/**
 * The floor for bench/relay.ts: a bare Node server that speaks just enough of the relay's protocol
 * for the load clients (docs/relay-protocol.md) and writes to them exactly as the relay does, with
 * nothing else. Whatever the relay takes above this server's figures, measured in the same run with
 * the same clients, is the relay's own work (its checks, its store, its bookkeeping).
 *
 * What it shares with the relay (src-relay/store/memory-store.ts, sessions.ts, client-session.ts):
 * - the same WebSocket handshake through `ws` (no compression) and the same
 *   `relay {"type":"ready",...}` control frame after a hello;
 * - a webhook is answered first, and the fan-out runs once that turn of the event loop is over
 *   (setImmediate), for every webhook taken in the turn;
 * - each batch is framed once (src-shared/stream/ws-frame.ts): its events' frames then one
 *   `relay {"type":"cursor",...}` frame, concatenated into one buffer, and that one buffer is written
 *   to every socket whose hello named the events' `data.to`: one write per socket per batch.
 *
 * What it leaves out: signature and token checks, the store, cursors kept per client, replay, the
 * per-client filter, back-pressure and budget checks, metrics. (It reads only `data.to`, the
 * extension the relay's fan-out indexes on; the relay also sees events without one: not used here.)
 *
 * Run as a child process (`node bench/floor-server.ts`): prints `floor listening on <url>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { textFrameOf } from '../src-shared/stream/ws-frame.ts';
import { encodeControl } from '../src-shared/relay/relay-protocol.ts';

const byExtension = new Map<string, Set<WebSocket>>();
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

/** Webhooks taken in this turn of the event loop, in order: [extension, body]. */
let unpublished: [string, string][] = [];
/** A cursor of the relay's shape (`<ms>-<seq>`), so each batch's bytes are the relay's. */
let lastMs = 0;
let lastSeq = 0;
function nextCursor(): string {
  const now = Date.now();
  if (now > lastMs) [lastMs, lastSeq] = [now, 0];
  else lastSeq += 1;
  return `${lastMs}-${lastSeq}`;
}

function publish(): void {
  const batch = unpublished;
  unpublished = [];
  const byTo = new Map<string, string[]>();
  for (const [to, body] of batch) {
    const list = byTo.get(to);
    if (list) list.push(body);
    else byTo.set(to, [body]);
  }
  for (const [to, bodies] of byTo) {
    const sockets = byExtension.get(to);
    if (!sockets) continue;
    const whole = Buffer.concat([
      ...bodies.map((b) => textFrameOf(b)),
      textFrameOf(encodeControl({ type: 'cursor', cursor: nextCursor() })),
    ]);
    for (const ws of sockets) {
      const socket = (ws as unknown as { _socket?: Duplex })._socket;
      if (socket && !socket.destroyed) socket.write(whole);
    }
  }
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || !req.url?.startsWith('/webhook/')) {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let to: string;
    try {
      to = String((JSON.parse(body) as { data?: { to?: unknown } }).data?.to ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"errcode":0}');
    if (unpublished.push([to, body]) === 1) setImmediate(publish);
  });
});

server.on('upgrade', (req, socket: Duplex, head) => {
  socket.on('error', () => {});
  wss.handleUpgrade(req, socket, head, (ws) => {
    const mine: string[] = [];
    ws.once('message', (data) => {
      try {
        const hello = JSON.parse(String(data)) as { filter?: { extensions?: unknown[] } };
        for (const e of hello.filter?.extensions ?? []) {
          const key = String(e);
          let set = byExtension.get(key);
          if (!set) byExtension.set(key, (set = new Set()));
          set.add(ws);
          mine.push(key);
        }
      } catch {
        return ws.terminate();
      }
      ws.send(
        encodeControl({
          type: 'ready',
          session: 'floor',
          cursor: null,
          heartbeatMs: 25_000,
          idleTimeoutMs: 60_000,
        }),
      );
    });
    ws.on('close', () => {
      for (const key of mine) byExtension.get(key)?.delete(ws);
    });
    ws.on('error', () => {});
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`,
  );
});
process.on('SIGTERM', () => process.exit(0));
