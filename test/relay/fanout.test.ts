import { describe, expect, it } from 'vitest';
import { TenantFanout } from '../../src-relay/fanout.ts';
import type { StoredEvent } from '../../src-relay/store/types.ts';

interface Batch {
  events: readonly StoredEvent[];
}

class Recorder {
  readonly got: string[] = [];
  readonly writes: number[] = [];
  offer(_batch: Batch, events: readonly StoredEvent[]): void {
    this.got.push(...events.map((e) => e.eventId));
    this.writes.push(events.length);
  }
}

const ev = (eventId: string, event: number, to: string | null): StoredEvent => ({
  tenant: 'acme',
  eventId,
  event,
  to,
  body: '{}',
  receivedAt: 0,
  cursor: `1-${eventId.length}`,
});

describe('TenantFanout', () => {
  it('offers each event once, only to sessions that may want it, and everything to sessions not yet live', () => {
    const f = new TenantFanout<Batch, Recorder>();
    const ext101 = new Recorder();
    const both = new Recorder(); // extension 101 and opted in to all 30011: offered once, not twice
    const dids = new Recorder();
    const presence = new Recorder();
    const waiting = new Recorder();
    for (const r of [ext101, both, dids, presence, waiting]) f.add(r);
    f.index(ext101, { extensions: ['101'], events: [], hasNumbers: false });
    f.index(both, { extensions: ['101'], events: [30011], hasNumbers: false });
    f.index(dids, { extensions: [], events: [], hasNumbers: true });
    f.index(presence, { extensions: [], events: [30009], hasNumbers: false });
    f.publish({ events: [ev('ring-101', 30011, '101')] });
    f.publish({ events: [ev('ring-102', 30011, '102')] });
    f.publish({ events: [ev('presence', 30009, null)] });
    expect(ext101.got).toEqual(['ring-101']);
    expect(both.got).toEqual(['ring-101', 'ring-102']);
    expect(dids.got).toEqual(['ring-101', 'ring-102']);
    expect(presence.got).toEqual(['presence']);
    expect(waiting.got).toEqual(['ring-101', 'ring-102', 'presence']);
    f.remove(both);
    f.publish({ events: [ev('ring-101b', 30011, '101')] });
    expect(both.got).toHaveLength(2);
    expect(f.size).toBe(4);
    expect(f.lastCursor).toBe('1-9');
  });

  it('offers a batch to each session once, with the events it may want, in order', () => {
    const f = new TenantFanout<Batch, Recorder>();
    const both = new Recorder();
    const other = new Recorder();
    f.add(both);
    f.add(other);
    f.index(both, { extensions: ['101'], events: [30011], hasNumbers: true });
    f.index(other, { extensions: ['103'], events: [], hasNumbers: false });
    f.publish({
      events: [
        ev('a', 30011, '101'),
        ev('bb', 30011, '102'),
        ev('ccc', 30011, '103'),
        ev('dddd', 30009, null),
      ],
    });
    expect(both.got).toEqual(['a', 'bb', 'ccc']);
    expect(both.writes).toEqual([3]);
    expect(other.got).toEqual(['ccc']);
    expect(f.lastCursor).toBe('1-4');
  });
});
