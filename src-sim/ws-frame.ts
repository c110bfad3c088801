/**
 * One server-to-client WebSocket text frame (RFC 6455 section 5.2: FIN, opcode 1, unmasked), built
 * once per event so that fan-out to many sockets is one `write` of the same bytes per socket instead
 * of framing the payload again for each. Valid only without permessage-deflate (which the hub turns off).
 */
export function textFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const headerLength = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + n);
  frame[0] = 0x81;
  if (n < 126) frame[1] = n;
  else if (n < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(n), 2);
  }
  payload.copy(frame, headerLength);
  return frame;
}
