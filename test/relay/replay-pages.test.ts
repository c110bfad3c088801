import { describe, expect, it } from 'vitest';
import { ReplayPages } from '../../src-relay/replay-pages.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import type { NewEvent } from '../../src-relay/store/types.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const ev = (eventId: string, at: number): NewEvent => ({
  tenant: 'acme',
  eventId,
  event: 30011,
  to: '101',
  body: `{"event_id":"${eventId}"}`,
  receivedAt: at,
});

describe('ReplayPages', () => {
  it('shares a full page between sessions, and never the end of the stream read before an append', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    let reads = 0;
    const counted = Object.assign(Object.create(store) as MemoryStore, {
      readAfter: (...args: Parameters<MemoryStore['readAfter']>) => {
        reads += 1;
        return store.readAfter(...args);
      },
    });
    const pages = new ReplayPages(counted);
    for (const id of ['a', 'b', 'c']) await store.append(ev(id, clock.now()));
    const from = '0-0';
    // Two sessions resuming from the same place: the full page is read once.
    const [p1, p2] = await Promise.all([pages.read('acme', from, 2), pages.read('acme', from, 2)]);
    expect(p1.events.map((e) => e.eventId)).toEqual(['a', 'b']);
    expect(p2).toBe(p1);
    expect(reads).toBe(1);
    // The tail (fewer than the limit) read by one session; an event appended after it; another
    // session asking for the same page must see that event, not the first session's tail.
    const tail = await pages.read('acme', p1.events[1]!.cursor, 2);
    expect(tail.events.map((e) => e.eventId)).toEqual(['c']);
    await store.append(ev('d', clock.now()));
    const later = await pages.read('acme', p1.events[1]!.cursor, 2);
    expect(later.events.map((e) => e.eventId)).toEqual(['c', 'd']);
    await store.close();
  });
});
