import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareCursors } from '../../src-shared/relay/relay-protocol.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import type { NewEvent } from '../../src-relay/store/types.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const ev = (eventId: string, receivedAt: number, tenant = 'acme'): NewEvent => ({
  tenant,
  eventId,
  event: 30011,
  to: '101',
  body: `{"event_id":"${eventId}"}`,
  receivedAt,
});

describe('MemoryStore', () => {
  it('dedupes for the whole window and forgets afterwards', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    expect((await store.append(ev('a', clock.now()))).status).toBe('stored');
    await clock.advance(24 * 3600_000);
    expect((await store.append(ev('a', clock.now()))).status).toBe('duplicate');
    expect((await store.append(ev('a', clock.now(), 'globex'))).status).toBe('stored'); // per tenant
    await clock.advance(3600_000 + 1);
    expect((await store.append(ev('a', clock.now()))).status).toBe('stored');
    await store.close();
  });

  it('keeps cursors increasing when the wall clock steps back, and drops events by age', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock, retention: { maxAgeMs: 60_000 } });
    const first = await store.append(ev('a', clock.now()));
    clock.skewWall(-5_000);
    const second = await store.append(ev('b', clock.now()));
    if (first.status !== 'stored' || second.status !== 'stored') throw new Error('not stored');
    expect(compareCursors(second.cursor, first.cursor)).toBe(1);
    await clock.advance(120_000); // sweep runs every minute
    const page = await store.readAfter('acme', first.cursor, 10);
    expect(page.events).toHaveLength(0);
    expect(page.gap).not.toBeNull();
    await store.close();
  });

  it('survives a graceful restart through its snapshot, and reports a gap without one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-snap-'));
    try {
      const clock = new FakeClock();
      const snapshotFile = join(dir, 'snapshot.json');
      const a = new MemoryStore({ clock, snapshotFile });
      await a.open();
      const r = await a.append(ev('s1', clock.now()));
      await a.append(ev('s2', clock.now()));
      await a.close();
      if (r.status !== 'stored') throw new Error('not stored');
      await clock.advance(1000);
      const b = new MemoryStore({ clock, snapshotFile });
      await b.open();
      const page = await b.readAfter('acme', r.cursor, 10);
      expect(page.events.map((e) => e.eventId)).toEqual(['s2']);
      expect(page.gap).toBeNull();
      expect((await b.append(ev('s2', clock.now()))).status).toBe('duplicate');
      await b.close();
      const c = new MemoryStore({ clock }); // no snapshot: an older cursor may have missed events
      expect((await c.readAfter('acme', r.cursor, 10)).gap).not.toBeNull();
      await c.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
