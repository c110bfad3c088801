/**
 * One writer at a time, two ways (src-shared/kit/one-at-a-time.ts), used by the call history and the
 * relay cursor (LatestWriter) and by settings updates and connection rebuilds (SerialQueue).
 */
import { describe, expect, it } from 'vitest';
import { LatestWriter, SerialQueue } from '../../src-shared/kit/one-at-a-time.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

describe('LatestWriter', () => {
  it('writes at most one at a time and coalesces requests made meanwhile into one write of the latest state', async () => {
    let state = 0;
    const written: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const gates = [gate(), gate()];
    const writer = new LatestWriter(
      async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const value = state;
        await gates[written.length]?.opened;
        written.push(value);
        inFlight--;
      },
      memoryLogger(),
      'not saved',
    );
    state = 1;
    const first = writer.write();
    for (state = 2; state <= 5; state++) void writer.write();
    state = 5;
    gates[0]!.open();
    gates[1]!.open();
    await first;
    await writer.idle();
    expect(written).toEqual([1, 5]);
    expect(maxInFlight).toBe(1);
  });

  it('logs a failed write and writes again on the next request', async () => {
    const logger = memoryLogger();
    let fail = true;
    let writes = 0;
    const writer = new LatestWriter(
      async () => {
        writes++;
        if (fail) throw new Error('disk full');
      },
      logger,
      'history could not be saved',
    );
    await writer.write();
    expect(logger.records.map((r) => r.msg)).toEqual(['history could not be saved']);
    fail = false;
    await writer.write();
    expect(writes).toBe(2);
  });
});

describe('SerialQueue', () => {
  it('runs jobs whole, in call order; a failure is its caller’s and does not stop the next', async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    const job =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await Promise.resolve();
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const a = queue.run(job('a'));
    const b = queue.run(job('b', true));
    const c = queue.run(job('c'));
    expect(await a).toBe('a');
    await expect(b).rejects.toThrow('b');
    expect(await c).toBe('c');
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });
});
