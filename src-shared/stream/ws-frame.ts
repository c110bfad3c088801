/**
 * Server-to-client WebSocket text frames (RFC 6455 section 5.2: FIN, opcode 1, unmasked), built
 * once and written as they are: an event fanned out to many sockets is framed once instead of once
 * per socket. The relay (src-relay/ws-frames.ts) and the simulator's hub (src-sim/subscribe.ts)
 * both write these. Valid only without permessage-deflate, which both turn off.
 */

/**
 * Where a frame's bytes are taken. By default a slice of Node's shared pool (`Buffer.allocUnsafe`:
 * fast, for a frame written and dropped). A frame that is kept (the relay's FrameCache) takes
 * memory of its own instead, `Buffer.allocUnsafeSlow`: a pool slice keeps the pool's whole slab
 * alive (64 KiB on Node 24) as long as it lives, so a cache of small pooled frames held many times
 * the bytes it counted.
 */
const pooled = (size: number): Buffer => Buffer.allocUnsafe(size);

export function textFrame(payload: Buffer, alloc: (size: number) => Buffer = pooled): Buffer {
  const frame = alloc(headerSize(payload.length) + payload.length);
  payload.copy(frame, writeHeader(frame, 0, payload.length));
  return frame;
}

export function textFrameOf(text: string, alloc: (size: number) => Buffer = pooled): Buffer {
  return textFrame(Buffer.from(text, 'utf8'), alloc);
}

function headerSize(n: number): number {
  return n < 126 ? 2 : n < 65_536 ? 4 : 10;
}

function writeHeader(out: Buffer, at: number, n: number): number {
  out[at] = 0x81; // FIN + text
  if (n < 126) {
    out[at + 1] = n;
    return at + 2;
  }
  if (n < 65_536) {
    out[at + 1] = 126;
    out.writeUInt16BE(n, at + 2);
    return at + 4;
  }
  out[at + 1] = 127;
  out.writeUInt32BE(Math.floor(n / 2 ** 32), at + 2);
  out.writeUInt32BE(n >>> 0, at + 6);
  return at + 10;
}
