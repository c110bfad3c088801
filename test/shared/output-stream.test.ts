/**
 * The one writer of a standard stream (src-shared/process/output-stream.ts), against a real pipe whose
 * reader has gone (EPIPE, as `... | head -1` leaves it) and a stand-in that never drains.
 */
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { outputStream, type WritableOutput } from '../../src-shared/process/output-stream.ts';

/** A stream that takes every write and never passes it on (a reader that stopped reading). */
class StalledStream extends EventEmitter implements WritableOutput {
  writableLength = 0;
  writes = 0;
  write(text: string): boolean {
    this.writes++;
    this.writableLength += Buffer.byteLength(text);
    return false;
  }
}

describe('outputStream', () => {
  it('a real stdout whose reader has gone: one EPIPE, writes dropped after, no uncaught error', () => {
    // A child writes to its stdout, a pipe whose reading end this process has closed at once.
    const script = `
      import { outputStream } from ${JSON.stringify(new URL('../../src-shared/process/output-stream.ts', import.meta.url).href)};
      const out = outputStream(process.stdout);
      let uncaught = 0;
      process.on('uncaughtException', () => uncaught++);
      out.gone.then((g) => {
        for (let i = 0; i < 1000; i++) out.write('after\\n');
        setTimeout(() => { process.stderr.write(JSON.stringify({ code: g.code, gone: out.isGone(), uncaught }) + '\\n'); }, 100);
      });
      const tick = setInterval(() => out.write('line\\n'), 5);
      setTimeout(() => clearInterval(tick), 2000);
    `;
    const run = spawnSync(
      'bash',
      ['-c', `"${process.execPath}" --input-type=module -e "$0" | true`, script],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(JSON.parse(run.stderr.trim())).toEqual({ code: 'EPIPE', gone: true, uncaught: 0 });
  });

  it('a reader that stopped reading: gone past the backlog bound, writes stop reaching the stream', async () => {
    const stream = new StalledStream();
    const out = outputStream(stream, { maxBacklogBytes: 1_000 });
    for (let i = 0; i < 100; i++) out.write('x'.repeat(100));
    await expect(out.gone).resolves.toEqual({ code: 'backlog' });
    expect(stream.writes).toBe(11);
  });

  it('backlog "drop" (stderr): writes are dropped while the reader is behind, and resume after', async () => {
    const stream = new StalledStream();
    const out = outputStream(stream, { maxBacklogBytes: 1_000, backlog: 'drop' });
    for (let i = 0; i < 100; i++) out.write('x'.repeat(100));
    expect(stream.writes).toBe(11);
    stream.writableLength = 0; // the reader caught up
    out.write('again');
    expect(stream.writes).toBe(12);
    expect(out.isGone()).toBe(false);
  });

  it('a write that throws is the stream gone, not an exception', async () => {
    const stream = new StalledStream();
    stream.write = () => {
      throw Object.assign(new Error('write EBADF'), { code: 'EBADF' });
    };
    const out = outputStream(stream);
    expect(() => out.write('x')).not.toThrow();
    await expect(out.gone).resolves.toEqual({ code: 'EBADF' });
  });

  it('one writer per stream: a second call adds no listener', () => {
    const stream = new StalledStream();
    expect(outputStream(stream)).toBe(outputStream(stream));
    expect(stream.listenerCount('error')).toBe(1);
  });
});
