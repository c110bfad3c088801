/**
 * The relay's shared frame cache (src-relay/ws-frames.ts) keeps no more memory alive than its
 * bound. A small Buffer made with Buffer.allocUnsafe (or Buffer.from) is a slice of Node's shared
 * pool (64 KiB slabs on Node 24): kept in the cache, each frame kept its whole slab alive, so the
 * cache's 16 MiB of frames held several times that (bench/relay-memory.ts: 817 slabs, 53 MB, after
 * 12,000 calls, and growing with every call the relay framed).
 */
import { describe, expect, it } from 'vitest';
import { FrameCache } from '../../src-relay/ws-frames.ts';

/** The memory the frames keep alive: the ArrayBuffers under them, each counted once. */
function keptAlive(frames: Buffer[]): number {
  const buffers = new Set<ArrayBufferLike>(frames.map((f) => f.buffer));
  let bytes = 0;
  for (const b of buffers) bytes += b.byteLength;
  return bytes;
}

describe('FrameCache', () => {
  it('keeps no more memory alive than its bound, whatever else shares the Buffer pool', () => {
    const maxBytes = 64 * 1024;
    const cache = new FrameCache(maxBytes);
    const body = (i: number) => `{"event_id":"${i}","data":{"state":"ringing"}}`.padEnd(300, ' ');
    const other: Buffer[] = [];
    const events = 5_000;
    for (let i = 0; i < events; i++) {
      cache.frame(`acme ${i}`, body(i));
      // The rest of the process allocates from the same pool between two events (requests,
      // Redis replies): short-lived, dropped at once.
      other.push(Buffer.allocUnsafe(2_000));
      other.length = 0;
    }
    // The frames still held: the newest ones (asking again answers the cached frame).
    const held: Buffer[] = [];
    let bytes = 0;
    for (let i = events - 1; i >= 0 && bytes < maxBytes; i--) {
      const f = cache.frame(`acme ${i}`, body(i));
      held.push(f);
      bytes += f.length;
    }
    expect(held.length).toBeGreaterThan(100);
    // Old: ~30 frames a 64 KiB slab, so the ~200 frames held kept about 7 slabs (448 KiB) alive.
    expect(keptAlive(held)).toBeLessThanOrEqual(maxBytes * 1.25);
    // A 300-byte text: a 4-byte header (RFC 6455 section 5.2), then the text.
    expect(held[0]!.subarray(4).toString()).toBe(body(events - 1));
  });
});
