/**
 * The floor for bench/relay.ts: a bare Node server that speaks just enough of the relay's protocol
 * for the load clients (docs/relay-protocol.md) and does nothing else. It takes the same WebSocket
 * handshake through `ws` (no compression), answers a hello with the same `relay {"type":"ready"}`
 * control frame, and writes each webhook's body as one text frame (framed once, src-shared/ws-frame.ts,
 * as the relay does) to every client whose hello named the webhook's `data.to`.
 *
 * No token check, no signature, no store, no cursor, no back-pressure: whatever the relay takes
 * above this server's figures, measured in the same run with the same clients, is the relay's own.
 *
 * Run as a child process (`node bench/floor-server.ts`): prints `floor listening on <url>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { textFrameOf } from '../src-shared/ws-frame.ts';

const byExtension = new Map<string, Set<WebSocket>>();
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

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
    const frame = textFrameOf(body);
    for (const ws of byExtension.get(to) ?? []) {
      const socket = (ws as unknown as { _socket?: Duplex })._socket;
      if (socket && !socket.destroyed) socket.write(frame);
    }
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
      ws.send('relay {"type":"ready","session":"floor","cursor":null}');
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
