/**
 * A `ws` socket factory filling the seam of socket.ts (CreateSocket and its guarantees). The app
 * passes its transport's route (src-shared/net/transport.ts: the proxy tunnel, the trusted CAs;
 * there is no default, so no socket of the app bypasses the proxy or the CA file); the relay's
 * gateway passes its own (src-relay/gateway/).
 */
import type { Agent } from 'node:http';
import WebSocket from 'ws';
import type { CreateSocket, SocketCallbacks, SocketConnection } from './socket.ts';

/**
 * The request option that carries a connection's AbortSignal to the transport's agent (Node strips
 * `signal` itself before the agent is asked for a socket): a fetch's signal, or the one a socket
 * aborts when it is closed while still connecting. Aborting it ends a CONNECT still waiting.
 */
export const ABANDON_OPTION = 'screenpopAbandon';

/** ws closes a connection with 1009 above this; the pipeline drops frames above 64 KiB itself. */
const MAX_PAYLOAD_BYTES = 1024 * 1024;
const MAX_REJECTION_BODY = 4096;

/** How a socket reaches its server: the agent (proxy tunnel) and the trusted CAs (src-shared/net/transport.ts). */
export interface SocketRoute {
  agent?: (url: URL) => Agent | undefined;
  ca?: string[] | undefined;
}

/** A `ws` socket factory going the given route (NetTransport builds the one the app uses). */
export function wsSocketFactory(route: SocketRoute): CreateSocket {
  return (url, headers, callbacks) => {
    const agent = route.agent?.(new URL(url));
    // Aborted when the socket is closed or terminated before it opened: a proxy's CONNECT still
    // waiting for its answer ends with it, instead of running on to its own deadline.
    const abandon = new AbortController();
    const ws = new WebSocket(url, {
      headers,
      maxPayload: MAX_PAYLOAD_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
      ...(agent && { agent, [ABANDON_OPTION]: abandon.signal }),
      ...(route.ca && { ca: route.ca }),
    });
    ws.once('close', () => abandon.abort());
    return wire(ws, callbacks, () => abandon.abort());
  };
}

function wire(
  ws: WebSocket,
  callbacks: SocketCallbacks,
  abandon: () => void = () => {},
): SocketConnection {
  ws.on('open', () => callbacks.open());
  ws.on('message', (data, isBinary) => {
    if (isBinary) return; // the protocol is text frames only
    callbacks.message(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString());
  });
  ws.on('unexpected-response', (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_REJECTION_BODY) chunks.push(chunk);
      size += chunk.length;
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      callbacks.rejected(
        res.statusCode ?? 0,
        Buffer.concat(chunks).toString('utf8').slice(0, MAX_REJECTION_BODY),
      );
      req.destroy();
      ws.terminate();
    };
    res.once('end', finish);
    res.once('error', finish);
    res.once('close', finish);
  });
  ws.on('error', (error) => callbacks.error(error));
  ws.on('close', (code, reason) => callbacks.closed(code, reason.toString()));
  return {
    send: (text) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(text);
    },
    close: (code, reason) => {
      if (ws.readyState === WebSocket.CONNECTING) {
        abandon();
        ws.terminate();
      } else ws.close(code, reason);
    },
    terminate: () => {
      if (ws.readyState === WebSocket.CONNECTING) abandon();
      ws.terminate();
    },
  };
}
