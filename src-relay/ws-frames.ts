import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { textFrame, textFrameOf } from '../src-shared/stream/ws-frame.ts';

/**
 * The relay's writes under `ws`: text frames (src-shared/stream/ws-frame.ts) built once and written as
 * they are. An event fanned out to a thousand sockets is framed once, and a burst of events with
 * its `cursor` frame leaves in one write, instead of a frame header, a copy of the text and a
 * write per socket per event through `ws.send`.
 *
 * Writing to the socket under `ws` is safe because the relay's server never compresses and never
 * sends fragmented or Blob messages: `ws`'s sender then keeps no state between frames and writes
 * each frame whole, so frames from here and from `ws` (pong, close) interleave only at frame
 * boundaries. `ws.bufferedAmount` counts these bytes too (it reads the socket's buffer). These are
 * `ws`'s internals, not its API: package.json pins `ws` to a minor range and ws-internals.ts checks
 * each assumption at start-up (the relay refuses to start if one no longer holds).
 */
export { textFrame, textFrameOf };

/** The socket under an open `ws` server socket, or null when there is none to write to. */
export function socketOf(ws: WebSocket): Duplex | null {
  const socket = (ws as unknown as { _socket?: Duplex | null })._socket;
  return socket && !socket.destroyed && ws.readyState === ws.OPEN ? socket : null;
}

/**
 * Frames of recent events, shared: a thousand clients replaying the same backlog, or receiving
 * the same live event, write the same bytes instead of each framing (allocating and copying) its
 * own. Keyed by a string naming the event (the Redis store reads a fresh copy of an event for
 * each client). Least recently used frames are dropped past `maxBytes`.
 *
 * Each frame kept is memory of its own (Buffer.allocUnsafeSlow), not a slice of Node's shared
 * Buffer pool: a slice keeps its whole 64 KiB slab alive, and the frames of a relay's events,
 * made a few at a time between other allocations, each kept a slab of their own or nearly, so
 * that the 16 MiB counted were hundreds of MiB held after days (bench/relay-memory.ts: 53 MB of
 * slabs after 12,000 calls and growing; test/relay/frame-cache.test.ts).
 */
export class FrameCache {
  private readonly frames = new Map<string, Buffer>();
  private bytes = 0;
  private readonly maxBytes: number;

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.maxBytes = maxBytes;
  }

  frame(key: string, text: string | Buffer): Buffer {
    let f = this.frames.get(key);
    if (f) {
      this.frames.delete(key);
      this.frames.set(key, f);
      return f;
    }
    f = typeof text === 'string' ? textFrameOf(text, own) : textFrame(text, own);
    this.frames.set(key, f);
    this.bytes += f.length;
    while (this.bytes > this.maxBytes && this.frames.size > 1) {
      const [oldKey, old] = this.frames.entries().next().value!;
      this.frames.delete(oldKey);
      this.bytes -= old.length;
    }
    return f;
  }
}

/** A Buffer with memory of its own (see FrameCache). */
const own = (size: number): Buffer => Buffer.allocUnsafeSlow(size);

/** Writes a buffer, or several as one (a single writev), without copying them into one. */
export function writeAll(
  socket: Duplex,
  bytes: Buffer | readonly Buffer[],
  done?: (err?: Error | null) => void,
): void {
  if (Buffer.isBuffer(bytes)) {
    socket.write(bytes, done);
    return;
  }
  const parts = bytes as readonly Buffer[];
  if (parts.length === 1) {
    socket.write(parts[0]!, done);
    return;
  }
  socket.cork();
  for (let i = 0; i < parts.length - 1; i++) socket.write(parts[i]!);
  socket.write(parts[parts.length - 1]!, done);
  socket.uncork();
}
