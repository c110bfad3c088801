/**
 * The one text-frame builder (src-shared/stream/ws-frame.ts) the relay and the simulator write with, read
 * back by `ws`'s own receiver at each header size (RFC 6455 section 5.2: 7-bit, 16-bit and 64-bit
 * lengths).
 */
import { describe, expect, it } from 'vitest';
import * as ws from 'ws';
import { textFrameOf } from '../../src-shared/stream/ws-frame.ts';

/** ws's frame parser (ws exports it as Receiver; @types/ws leaves it out). */
interface FrameReceiver {
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  write(chunk: Buffer): void;
}
const Receiver = (
  ws as unknown as {
    Receiver: new (options: { isServer: boolean; maxPayload: number }) => FrameReceiver;
  }
).Receiver;

function readBack(frame: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    // A client's receiver: frames from a server are unmasked.
    const receiver = new Receiver({ isServer: false, maxPayload: 0 });
    receiver.on('message', (data, isBinary) =>
      isBinary ? reject(new Error('binary')) : resolve(data.toString('utf8')),
    );
    receiver.on('error', reject);
    receiver.write(frame);
  });
}

describe('textFrameOf', () => {
  for (const size of [0, 125, 126, 65_535, 65_536, 200_000]) {
    it(`a ${size}-byte text reads back whole`, async () => {
      const text = 'é'.repeat(Math.floor(size / 2)) + 'x'.repeat(size % 2);
      const frame = textFrameOf(text);
      expect(frame[0]).toBe(0x81);
      expect(await readBack(frame)).toBe(text);
    });
  }
});
