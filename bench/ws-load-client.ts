/**
 * The benchmark's load generator for the relay's client side: many WebSocket clients in one
 * process, as lean as a load generator must be (a `ws` client per socket allocates a Buffer, an
 * event and a string per message, and the garbage collector of the measuring process then adds
 * pauses of 100 ms and more to the latencies it measures). Each client is a plain TCP socket: the
 * opening handshake is written by hand, the hello is one masked text frame (RFC 6455 section 5.3),
 * and the relay's frames (unmasked, text) are read in place: no allocation per message.
 *
 * Events must carry a numeric event_id first in the body (`{"event_id":"<n>",...`): the client
 * reads `n` from the bytes and records the arrival time against it.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterResponseHead } from './response-head.ts';

export interface LoadClientOptions {
  /** ws://host:port/path */
  url: string;
  token: string;
  hello: object;
  localAddress?: string;
  /** Called for each event frame: its number and the arrival time (performance.now()). */
  onEvent(n: number, at: number): void;
  /** Called for each control frame (`relay ...`). */
  onControl(): void;
}

const PREFIX = Buffer.from('{"event_id":"');
const READY = Buffer.from('"type":"ready"');

/** Connects, says hello, resolves once the relay answered `ready` (or rejects). */
export function loadClient(o: LoadClientOptions): Promise<{ close(): void }> {
  const url = new URL(o.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: url.hostname,
      port: Number(url.port),
      ...(o.localAddress ? { localAddress: o.localAddress } : {}),
    });
    socket.setNoDelay(true);
    let upgraded = false;
    let ready = false;
    let pending: Buffer | null = null;
    const fail = (err: Error) => {
      socket.destroy();
      if (!ready) reject(err);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n` +
          `Authorization: Bearer ${o.token}\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      let data = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = null;
      if (!upgraded) {
        const body = afterResponseHead(data, '101', 'handshake refused');
        if (body === undefined) {
          pending = data;
          return;
        }
        if (body instanceof Error) return fail(body);
        upgraded = true;
        socket.write(maskedText(JSON.stringify(o.hello)));
        data = body;
      }
      let at = 0;
      while (at + 2 <= data.length) {
        const opcode = data[at]! & 0x0f;
        let len = data[at + 1]! & 0x7f;
        let head = 2;
        if (len === 126) {
          if (at + 4 > data.length) break;
          len = data.readUInt16BE(at + 2);
          head = 4;
        } else if (len === 127) {
          if (at + 10 > data.length) break;
          len = data.readUInt32BE(at + 6);
          head = 10;
        }
        if (at + head + len > data.length) break;
        const start = at + head;
        if (opcode === 0x8) return socket.destroy(); // close
        if (opcode === 0x1) {
          if (data[start] === 0x72 /* r: relay control frame */) {
            o.onControl();
            if (!ready && data.subarray(start, start + len).includes(READY)) {
              ready = true;
              resolve({ close: () => socket.destroy() });
            }
          } else if (data.compare(PREFIX, 0, PREFIX.length, start, start + PREFIX.length) === 0) {
            let n = 0;
            for (let i = start + PREFIX.length; data[i] !== 0x22; i++) n = n * 10 + data[i]! - 48;
            o.onEvent(n, performance.now());
          }
        }
        at = start + len;
      }
      if (at < data.length) pending = Buffer.from(data.subarray(at));
    });
    socket.once('close', () => {
      if (!ready) reject(new Error('closed before ready'));
    });
  });
}

/** A client-to-server text frame: masked, as the protocol requires of clients. */
function maskedText(text: string): Buffer {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? 2 : 4;
  const frame = Buffer.allocUnsafe(head + 4 + n);
  frame[0] = 0x81;
  if (n < 126) frame[1] = 0x80 | n;
  else {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(n, 2);
  }
  const mask = randomBytes(4);
  mask.copy(frame, head);
  for (let i = 0; i < n; i++) frame[head + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}
