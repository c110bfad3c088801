/**
 * The benchmark's Server-Sent Events client, for measuring smee.io (a webhook relay that streams
 * `text/event-stream`) with the same load workers and the same latency rule as the relay. Lean as
 * ws-load-client.ts is: a plain TCP socket, the request written by hand, the stream read in place.
 *
 * Each SSE message (lines ending in a blank line, WHATWG HTML "Server-sent events") is scanned for
 * the first `"event_id":"<n>"` in it; smee.io sends the webhook's JSON body inside its `data:` line
 * (with the request's headers around it), so `n` is the webhook's number. The response is chunked
 * (HTTP/1.1, no length): chunk-size lines sit between messages, never inside one of smee.io's
 * writes, so they are skipped as text that holds no `"event_id"`. The `ready` event resolves.
 */
import net from 'node:net';
import { afterResponseHead } from './response-head.ts';

export interface SseLoadClientOptions {
  /** http://host:port/channel */
  url: string;
  /** Called for each message that carries an event_id: its number. */
  onEvent(n: number): void;
}

const EVENT_ID = Buffer.from('"event_id":"');
const READY = Buffer.from('event: ready');
const END = Buffer.from('\n\n');

/** Connects, resolves once the server sent its `ready` event (or rejects). */
export function sseLoadClient(o: SseLoadClientOptions): Promise<{ close(): void }> {
  const url = new URL(o.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
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
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      let data = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = null;
      if (!upgraded) {
        const body = afterResponseHead(data, '200', 'stream refused');
        if (body === undefined) {
          pending = data;
          return;
        }
        if (body instanceof Error) return fail(body);
        upgraded = true;
        data = body;
      }
      let at = 0;
      for (;;) {
        const end = data.indexOf(END, at);
        if (end < 0) break;
        const id = data.indexOf(EVENT_ID, at);
        if (id >= 0 && id < end) {
          let n = 0;
          for (let i = id + EVENT_ID.length; data[i] !== 0x22; i++) n = n * 10 + data[i]! - 48;
          o.onEvent(n);
        } else if (!ready) {
          const r = data.indexOf(READY, at);
          if (r >= 0 && r < end) {
            ready = true;
            resolve({ close: () => socket.destroy() });
          }
        }
        at = end + END.length;
      }
      if (at < data.length) pending = Buffer.from(data.subarray(at));
    });
    socket.once('close', () => {
      if (!ready) reject(new Error('closed before ready'));
    });
  });
}
