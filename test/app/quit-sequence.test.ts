/** QuitSequence on the fake clock: once, always ends, never later than its time limit. */
import { describe, expect, it } from 'vitest';
import { QUIT_DEADLINE_MS, QuitSequence } from '../../src-main/core/app/quit-sequence.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

function setup(shutdown: () => Promise<void>) {
  const clock = new FakeClock();
  const logger = memoryLogger();
  const finished: number[] = [];
  const quit = new QuitSequence({ clock, logger, shutdown, finish: (code) => finished.push(code) });
  return { clock, logger, finished, quit };
}

describe('QuitSequence', () => {
  it('runs the clean part once, then ends the process', async () => {
    let runs = 0;
    const t = setup(async () => {
      runs++;
    });
    expect(t.quit.started).toBe(false);
    const first = t.quit.run('user');
    const second = t.quit.run('os-quit');
    expect(t.quit.started).toBe(true);
    await Promise.all([first, second]);
    expect(runs).toBe(1);
    expect(t.finished).toEqual([0]);
  });

  it('a hung shutdown does not keep the app: it ends at the time limit, and says so', async () => {
    const t = setup(() => new Promise<void>(() => {}));
    const done = t.quit.run('user');
    await t.clock.advance(QUIT_DEADLINE_MS.user - 1);
    expect(t.finished).toEqual([]);
    await t.clock.advance(1);
    await done;
    expect(t.finished).toEqual([0]);
    expect(t.logger.records.map((r) => r.msg)).toContain(
      'shutdown did not finish in time; quitting anyway',
    );
  });

  it('the OS ending the session while a user quit runs shortens the limit', async () => {
    const t = setup(() => new Promise<void>(() => {}));
    void t.quit.run('user');
    await t.clock.advance(1_000);
    void t.quit.run('session-end');
    await t.clock.advance(QUIT_DEADLINE_MS['session-end']);
    expect(t.finished).toEqual([0]);
    await t.clock.advance(QUIT_DEADLINE_MS.user);
    expect(t.finished).toEqual([0]); // once
  });

  it('a failing or throwing clean part still ends the process', async () => {
    const failing = setup(() => Promise.reject(new Error('disk full')));
    await failing.quit.run('user');
    expect(failing.finished).toEqual([0]);
    expect(failing.logger.records.find((r) => r.msg === 'shutdown failed')).toBeDefined();
    const throwing = setup(() => {
      throw new Error('not even a promise');
    });
    await throwing.quit.run('shutdown');
    expect(throwing.finished).toEqual([0]);
  });
});
