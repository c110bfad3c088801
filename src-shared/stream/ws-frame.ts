/**
 * Server-to-client WebSocket text frames (RFC 6455 section 5.2: FIN, opcode 1, unmasked), built
 * once and written as they are: an event fanned out to many sockets is framed once instead of once
 * per socket. The relay (src-relay/ws-frames.ts) and the simulator's hub (src-sim/subscribe.ts)
 * both write these. Valid only without permessage-deflate, which both turn off.
 */
export function textFrame(payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(headerSize(payload.length) + payload.length);
  payload.copy(frame, writeHeader(frame, 0, payload.length));
  return frame;
}

export function textFrameOf(text: string): Buffer {
  return textFrame(Buffer.from(text, 'utf8'));
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
