/**
 * The start-up check of what ws-frames.ts assumes of `ws`'s internals. The relay writes frames
 * under `ws` (the socket `ws` keeps as `_socket`, not a public API); a `ws` that renamed it, or
 * buffered, compressed or framed differently, would let the relay accept clients and deliver them
 * nothing, silently. package.json pins `ws` to a minor range; this check is for the install that
 * did not honour it (a hand-edited lock, an image built another way): the relay refuses to start
 * and says why.
 *
 * It runs one upgrade through `ws`'s public `handleUpgrade` on an in-memory socket, the path every
 * client takes, and then checks each assumption against what reaches that socket.
 */
import { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
// The ws this relay runs: the installed one from the sources, the one bundled in dist-relay/ built.
import wsPackage from 'ws/package.json' with { type: 'json' };
import { StartupError } from './startup-errors.ts';
import { socketOf, textFrameOf, writeAll } from './ws-frames.ts';

/** A server-side `WebSocketServer` class: the real one, or a test's stand-in. */
export type WsServerClass = new (options: {
  noServer: true;
}) => Pick<WebSocketServer, 'handleUpgrade'>;

/** The in-memory far side of the probe: records what is written; can hold writes unfinished. */
class ProbeSocket extends Duplex {
  readonly chunks: Buffer[] = [];
  hold = false;
  private readonly held: (() => void)[] = [];

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.chunks.push(Buffer.from(chunk));
    if (this.hold) this.held.push(() => done());
    else done();
  }

  release(): void {
    this.hold = false;
    for (const done of this.held.splice(0)) done();
  }

  /** Everything written since `from` (an index into chunks), as one buffer. */
  since(from: number): Buffer {
    return Buffer.concat(this.chunks.slice(from));
  }
}

const PROBE_REQUEST = {
  method: 'GET',
  url: '/',
  headers: {
    host: 'probe.invalid',
    upgrade: 'websocket',
    connection: 'Upgrade',
    'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'sec-websocket-version': '13',
  },
};

/** What is wrong with `ws` for ws-frames.ts, or null when every assumption holds. */
export function wsInternalsProblem(Server: WsServerClass = WebSocketServer): string | null {
  const socket = new ProbeSocket();
  let ws: WebSocket | undefined;
  try {
    const wss = new Server({ noServer: true });
    wss.handleUpgrade(PROBE_REQUEST as never, socket as never, Buffer.alloc(0), (upgraded) => {
      ws = upgraded;
    });
    if (!ws) return 'an upgrade on an in-memory socket did not complete';
    // 1. The socket `ws` writes to is where socketOf finds it.
    if (socketOf(ws) !== socket) return 'an open WebSocket no longer keeps its socket as `_socket`';
    // 2. `ws` writes a text frame whole and unchanged, straight to that socket: the same bytes
    //    ws-frames.ts builds (no compression, no buffering of its own), in the order written.
    const mark = socket.chunks.length;
    writeAll(socket, textFrameOf('ours'));
    ws.send('theirs');
    const expected = Buffer.concat([textFrameOf('ours'), textFrameOf('theirs')]);
    if (!socket.since(mark).equals(expected))
      return 'a text frame sent by `ws` is not written to its socket as ws-frames.ts writes one (compressed, buffered or framed another way)';
    // 3. bufferedAmount counts bytes written under `ws` (the relay's back-pressure reads it).
    socket.hold = true;
    const frame = textFrameOf('x'.repeat(64));
    writeAll(socket, frame);
    const counted = ws.bufferedAmount;
    socket.release();
    if (counted < frame.length)
      return '`bufferedAmount` no longer counts bytes written to the socket under `ws`';
    return null;
  } catch (err) {
    return `the check itself failed: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    ws?.terminate();
    socket.destroy();
  }
}

/** Throws a StartupError (cli.ts prints it and exits 1) when ws-frames.ts cannot work. */
export function assertWsInternals(Server?: WsServerClass): void {
  const problem = wsInternalsProblem(Server);
  if (problem === null) return;
  throw new StartupError(
    `ws ${wsPackage.version} is not the ws the relay was built for: ${problem}. ` +
      'The relay writes frames under ws (src-relay/ws-frames.ts) and with this ws it would accept ' +
      'clients and deliver them nothing. Install the ws version package.json pins ' +
      '(npm ci from the lock file), or adapt src-relay/ws-frames.ts and ws-internals.ts to this ws.',
  );
}
