import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('sp-history-');

const ring = (callId: string, startedAt: number) => ({
  callId,
  from: '+14155550123',
  fromDisplay: '(415) 555-0123',
  callerName: null,
  to: '101',
  toDisplay: '101',
  toName: null,
  startedAt,
});

describe('HistoryStore', () => {
  it('persists rings and outcomes, and reloads them', async () => {
    const clock = new FakeClock();
    const path = join(tmp.path, 'history.json');
    const h = new HistoryStore({ path, clock, logger: silentLogger, limit: 10 });
    await h.load();
    h.recordRing(ring('a', 1));
    h.recordRing(ring('b', 2));
    h.recordOutcome('a', 'answered', 10);
    h.recordOutcome('a', 'missed', 11); // answered is final, and so is the time it stopped ringing
    h.recordOutcome('b', 'missed', 12);
    await h.flush();
    expect(h.missedCount()).toBe(1);

    const again = new HistoryStore({ path, clock, logger: silentLogger, limit: 10 });
    await again.load();
    expect(again.list().map((e) => e.kind === 'call' && [e.callId, e.outcome, e.endedAt])).toEqual([
      ['b', 'missed', 12],
      ['a', 'answered', 10],
    ]);
    expect(again.missedCount()).toBe(1);
    again.markAllSeen();
    expect(again.missedCount()).toBe(0);
    // No temporary files left behind by the atomic writes, once they are done (markAllSeen starts one).
    await again.flush();
    expect((await readdir(tmp.path)).sort()).toEqual(['history.json']);
  });

  it('keeps the talk time of the leg that rang here, and reloads it', async () => {
    const clock = new FakeClock();
    const path = join(tmp.path, 'history.json');
    const h = new HistoryStore({ path, clock, logger: silentLogger, limit: 10 });
    await h.load();
    h.recordRing(ring('a', 1));
    h.recordOutcome('a', 'answered', 10);
    h.recordTalk('a', '102', 999); // a colleague's leg of the same call: not ours
    h.recordTalk('a', '101', 125);
    h.recordTalk('nope', '101', 5); // a call not in the history
    await h.flush();
    const again = new HistoryStore({ path, clock, logger: silentLogger, limit: 10 });
    await again.load();
    expect(again.list()).toMatchObject([{ callId: 'a', outcome: 'answered', talkSec: 125 }]);
  });

  it('caps the history, dropping the oldest', async () => {
    const h = new HistoryStore({
      path: join(tmp.path, 'h.json'),
      clock: new FakeClock(),
      logger: silentLogger,
      limit: 3,
    });
    await h.load();
    for (let i = 0; i < 5; i++) h.recordRing(ring(`c${i}`, i));
    expect(h.list().map((e) => e.callId)).toEqual(['c4', 'c3', 'c2']);
    expect(h.recent(2).map((e) => e.callId)).toEqual(['c4', 'c3']);
    h.setLimit(1);
    await h.flush();
    const saved = JSON.parse(await readFile(join(tmp.path, 'h.json'), 'utf8'));
    expect(saved.entries.map((e: { callId: string }) => e.callId)).toEqual(['c4']);
  });

  it('moves a corrupt file aside, starts empty and logs a warning', async () => {
    const path = join(tmp.path, 'history.json');
    await writeFile(path, '{"version":1,"entries":[{"callId":');
    const logger = memoryLogger();
    const clock = new FakeClock();
    const h = new HistoryStore({ path, clock, logger, limit: 10 });
    await h.load();
    expect(h.list()).toEqual([]);
    const files = await readdir(tmp.path);
    expect(files).toContain(`history.json.corrupt-${clock.now()}`);
    expect(logger.records.some((r) => r.level === 'warn' && /corrupt/.test(r.msg))).toBe(true);
    h.recordRing(ring('x', 1));
    await h.flush();
    expect(JSON.parse(await readFile(path, 'utf8')).entries).toHaveLength(1);
  });

  it('a corrupt file puts no caller number in the log (V8 would quote the text around the fault)', async () => {
    const path = join(tmp.path, 'history.json');
    // A file cut and spliced by a crash: the fault sits right next to a caller's number.
    await writeFile(
      path,
      '{"version":1,"entries":[{"callId":"c1","from":+14155550123,"to":"101","startedAt":1}]}',
    );
    const logger = memoryLogger();
    const h = new HistoryStore({ path, clock: new FakeClock(), logger, limit: 10 });
    await h.load();
    expect(h.list()).toEqual([]);
    const warn = logger.records.find((r) => /corrupt/.test(r.msg));
    expect(warn?.problem).toMatch(/^not valid JSON/);
    expect(JSON.stringify(logger.records)).not.toMatch(/415555|14155/);
  });

  it('never saves over a history file it could not read', async () => {
    const path = join(tmp.path, 'history.json');
    const good = JSON.stringify({
      version: 1,
      entries: [{ ...ring('old', 1), outcome: 'missed' }],
    });
    await writeFile(path, good);
    const logger = memoryLogger();
    const h = new HistoryStore({
      path,
      clock: new FakeClock(),
      logger,
      limit: 10,
      read: () => Promise.reject(Object.assign(new Error('locked'), { code: 'EBUSY' })),
    });
    await h.load();
    h.recordRing(ring('new', 2));
    await h.flush();
    expect(h.list().map((e) => e.callId)).toEqual(['new']);
    expect(await readFile(path, 'utf8')).toBe(good);
    expect(logger.records.some((r) => r.level === 'error')).toBe(true);
  });

  it('never saves over a corrupt history file it could not move aside', async () => {
    const path = join(tmp.path, 'history.json');
    const torn = '{"version":1,"entries":[{"callId":';
    await writeFile(path, torn);
    const h = new HistoryStore({
      path,
      clock: new FakeClock(),
      logger: silentLogger,
      limit: 10,
      moveAside: () => Promise.reject(new Error('read-only folder')),
    });
    await h.load();
    h.recordRing(ring('new', 2));
    await h.flush();
    expect(await readFile(path, 'utf8')).toBe(torn);
  });

  it('keeps the called line’s name and number, and reads files written before they existed', async () => {
    const path = join(tmp.path, 'history.json');
    const clock = new FakeClock();
    const h = new HistoryStore({ path, clock, logger: silentLogger, limit: 10 });
    await h.load();
    h.recordRing({
      ...ring('new', 2),
      to: '+14155550100',
      toDisplay: '(415) 555-0100',
      toName: 'Sales line',
    });
    await h.flush();
    const saved = JSON.parse(await readFile(path, 'utf8'));
    saved.entries.push({
      callId: 'old',
      from: '1',
      to: '102\u202E',
      startedAt: 1,
      outcome: 'missed',
    });
    await writeFile(path, JSON.stringify(saved));
    const again = new HistoryStore({ path, clock, logger: silentLogger, limit: 10 });
    await again.load();
    expect(again.list()).toMatchObject([
      { kind: 'call', callId: 'new', toDisplay: '(415) 555-0100', toName: 'Sales line' },
      // An entry from an older file: `to` shown as received, made safe to show.
      { kind: 'call', callId: 'old', to: '102\u202E', toDisplay: '102', toName: null },
    ]);
  });

  it('an answer is final: answered here beats answered by a colleague, and neither becomes missed', async () => {
    const h = new HistoryStore({
      path: 'mem',
      clock: new FakeClock(),
      logger: silentLogger,
      limit: 10,
      write: async () => {},
      read: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOENT' })),
    });
    await h.load();
    h.recordRing(ring('a', 1));
    h.recordOutcome('a', 'answered-elsewhere', 5);
    h.recordOutcome('a', 'missed', 6);
    expect(h.get('a')).toMatchObject({ outcome: 'answered-elsewhere', endedAt: 5 });
    h.recordOutcome('a', 'answered', 7);
    h.recordOutcome('a', 'answered-elsewhere', 8);
    expect(h.get('a')).toMatchObject({ outcome: 'answered', endedAt: 7 });
    expect(h.missedCount()).toBe(0);
  });

  it('drops invalid entries and closes calls left ringing by a previous run', async () => {
    const path = join(tmp.path, 'history.json');
    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        entries: [
          { callId: 'ok', from: '1', to: '101', startedAt: 5, outcome: 'ringing' },
          { callId: 7 },
          null,
          { callId: 'y', from: '1', to: '1', startedAt: 1, outcome: 'exploded' },
        ],
      }),
    );
    const h = new HistoryStore({ path, clock: new FakeClock(), logger: silentLogger, limit: 10 });
    await h.load();
    expect(h.list()).toMatchObject([{ callId: 'ok', outcome: 'ended' }]);
  });

  it('coalesces writes: one in flight, the last state wins', async () => {
    const writes: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = new HistoryStore({
      path: 'mem',
      clock: new FakeClock(),
      logger: silentLogger,
      limit: 10,
      read: async () => {
        throw Object.assign(new Error('none'), { code: 'ENOENT' });
      },
      write: async (_p, d) => {
        writes.push(d);
        await gate;
      },
    });
    await h.load();
    for (let i = 0; i < 10; i++) h.recordRing(ring(`c${i}`, i));
    release();
    await h.flush();
    expect(writes.length).toBe(2);
    expect(JSON.parse(writes[1] ?? '').entries).toHaveLength(10);
  });
});
