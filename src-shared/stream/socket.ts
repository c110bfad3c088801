/**
 * The seam between a stream and a WebSocket library: a factory taking the URL, handshake headers
 * and callbacks. ws-socket.ts is the `ws` factory (the app's goes its transport's route: through
 * the proxy, trusting the CA file); tests pass their own far side.
 *
 * Guarantees of a factory: `closed` is called exactly once per socket, last, whatever happened
 * (refused, rejected handshake, closed, terminated); `rejected` comes before it when the server
 * answered the upgrade with an HTTP status instead of 101.
 */
import { ERRCODE, readErrcode } from '../api/service-errors.ts';

export interface SocketCallbacks {
  open(): void;
  message(text: string): void;
  /** The handshake was answered with an HTTP error; `body` is at most 4 KiB of it. */
  rejected(status: number, body: string): void;
  error(error: Error): void;
  closed(code: number, reason: string): void;
}

export interface SocketConnection {
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Drop the TCP connection now, without a closing handshake (for a socket found dead). */
  terminate(): void;
}

export type CreateSocket = (
  url: string,
  headers: Record<string, string>,
  callbacks: SocketCallbacks,
) => SocketConnection;

/** A refused handshake as the streams judge it: the HTTP status, and the errcode of its body. */
export interface HandshakeRejection {
  status: number;
  /** The service's (or the relay's) errcode, when the body was JSON carrying a non-zero one. */
  errcode?: number;
  /** Its errmsg, when it had one (which phone system answered: service-errors.ts). */
  errmsg?: string;
}

/** The one reading of a `rejected(status, body)` callback, for every stream. */
export function handshakeRejection(status: number, body: string): HandshakeRejection {
  const read = readErrcode(body);
  if (read === undefined || read.errcode === ERRCODE.ok) return { status };
  return read.errmsg === undefined
    ? { status, errcode: read.errcode }
    : { status, errcode: read.errcode, errmsg: read.errmsg.slice(0, 200) };
}
