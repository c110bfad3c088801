import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A JSON answer (never cached). Answered before the request's body was read (a refusal, a
 * path that takes no body), the connection is closed after it, and what remains of the body is
 * read and dropped only up to a bound (discardBody): Node would otherwise read it, to reuse the
 * connection, for as long as the client cares to send.
 */
export function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  const unread = hasUnreadBody(res.req);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...(unread ? { Connection: 'close' } : {}),
  });
  res.end(text);
  if (unread) discardBody(res.req);
}

/** True while a request that carries a body has not been read to its end. */
export function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = Number(req.headers['content-length'] ?? 0);
  return req.headers['transfer-encoding'] !== undefined || length > 0;
}

/** Bytes of an unwanted body read (and dropped) so the answer reaches the client intact. */
const DISCARD_BYTES = 64 * 1024;
const DISCARD_MS = 1_000;

/**
 * Reads and drops what remains of a request's body, at most 64 KiB or 1 s, then closes the
 * connection. Closing at once, with the client's bytes unread, would make the kernel reset the
 * connection, and the client could lose the answer; reading it all is what let a client stream
 * gigabytes into a path that takes no body.
 */
export function discardBody(req: IncomingMessage): void {
  if (!hasUnreadBody(req) || req.destroyed) return;
  let bytes = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DISCARD_MS);
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > DISCARD_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Answers an upgrade request with a plain HTTP error (the handshake is refused, not upgraded). */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: { errcode: number; errmsg: string },
): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
  (socket as Socket).destroySoon?.();
}
