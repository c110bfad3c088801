import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  LastResort,
  recoveryPacer,
  type Fault,
  type FaultLoop,
} from '../../src-shared/process/last-resort.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

function setup() {
  const clock = new FakeClock();
  const secrets = new SecretRegistry();
  secrets.add('ss_the-api-secret');
  const logger = memoryLogger(secrets);
  const lastResort = new LastResort({ logger, clock, secrets });
  const faults: Fault[] = [];
  lastResort.onFault((f) => faults.push(f));
  return { clock, logger, lastResort, faults };
}

describe('LastResort', () => {
  it('a timer on a guarded clock that throws is reported; the clock and the other timers go on', async () => {
    const t = setup();
    const clock = t.lastResort.guardClock(t.clock);
    const fired: string[] = [];
    clock.setTimeout(() => {
      throw new TypeError('cannot read properties of undefined');
    }, 10);
    clock.setTimeout(() => fired.push('later'), 20);
    await t.clock.advance(30); // FakeClock.advance rethrows what a timer throws: here nothing does
    expect(fired).toEqual(['later']);
    expect(t.faults).toEqual([
      {
        origin: 'timer',
        message: 'TypeError: cannot read properties of undefined',
        at: t.clock.now() - 20,
        count: 1,
      },
    ]);
    expect(t.lastResort.faults().count).toBe(1);
  });

  it("handles the process's uncaught exceptions and unhandled rejections until removed", () => {
    const t = setup();
    const proc = new EventEmitter();
    const remove = t.lastResort.installOn(proc);
    proc.emit('uncaughtException', new RangeError('unknown call: c1'));
    proc.emit('unhandledRejection', 'a plain string');
    expect(t.faults.map((f) => [f.origin, f.message, f.count])).toEqual([
      ['uncaughtException', 'RangeError: unknown call: c1', 1],
      ['unhandledRejection', 'string: a plain string', 2],
    ]);
    remove();
    expect(proc.listenerCount('uncaughtException') + proc.listenerCount('unhandledRejection')).toBe(
      0,
    );
  });

  it('logs the stack with secrets scrubbed, and never passes a secret on', () => {
    const t = setup();
    t.lastResort.report('listener', new Error('login failed for ss_the-api-secret'));
    expect(t.faults[0]?.message).toBe('Error: login failed for [REDACTED]');
    const record = t.logger.records.find((r) => r.level === 'error');
    expect(record).toMatchObject({ origin: 'listener', count: 1, name: 'Error' });
    expect(String((record?.error as { stack?: string }).stack)).toContain('last-resort.test.ts');
    expect(JSON.stringify(t.logger.records)).not.toContain('ss_the-api-secret');
  });

  it('a listener that throws does not stop the others, nor the report', () => {
    const t = setup();
    t.lastResort.onFault(() => {
      throw new Error('listener bug');
    });
    const after: number[] = [];
    t.lastResort.onFault((f) => after.push(f.count));
    expect(() => t.lastResort.report('timer', new Error('x'))).not.toThrow();
    expect(after).toEqual([1]);
  });
});

describe('LastResort: a caught error in a loop is a fault', () => {
  const loopMessage = 'unexpected errors in a loop; no more are logged';
  const faultMessage = 'unexpected error caught by the last resort; carrying on';

  it('more than 200 faults within 10 s: logged once as a loop, told once, then no more logged', () => {
    const t = setup();
    const loops: FaultLoop[] = [];
    t.lastResort.onLoop((l) => loops.push(l));
    // What a write that fails and is logged by a write that fails did: thousands in a moment.
    for (let i = 0; i < 5_000; i++) t.lastResort.report('uncaughtException', new Error('EPIPE'));
    const logged = t.logger.records.map((r) => r.msg);
    // Ten one by one (the log's window), then the loop line: a few KB, never the loop's rate.
    expect(logged.filter((m) => m === faultMessage)).toHaveLength(10);
    expect(logged.filter((m) => m === loopMessage)).toHaveLength(1);
    expect(logged.at(-1)).toBe(loopMessage);
    expect(loops).toEqual([
      { faults: 201, withinMs: 10_000, last: expect.objectContaining({ count: 201 }) },
    ]);
    // Still counted and told, for the owner's status.
    expect(t.lastResort.faults().count).toBe(5_000);
    expect(t.faults).toHaveLength(5_000);
  });

  it('the same number spread over more than the window is no loop: ten a window logged, the rest counted', async () => {
    const t = setup();
    const loops: FaultLoop[] = [];
    t.lastResort.onLoop((l) => loops.push(l));
    // 400 faults, one every 51 ms (20.4 s): at most 197 in any 10 s.
    for (let i = 0; i < 400; i++) {
      t.lastResort.report('timer', new Error('a timer bug'));
      await t.clock.advance(51);
    }
    expect(loops).toEqual([]);
    expect(t.faults).toHaveLength(400);
    // Windows of 10 s from a window's first fault: faults 0-196 (10 logged, 187 counted),
    // 197-393 (the same), 394-399 (6 logged): 26 + 2 x 187 = 400.
    expect(t.logger.records.filter((r) => r.msg === faultMessage)).toHaveLength(26);
    expect(
      t.logger.records
        .filter((r) => r.msg === `${faultMessage} (more, not logged one by one)`)
        .map((r) => r.suppressed),
    ).toEqual([187, 187]);
  });

  it('the rule is the owner’s to set', () => {
    const clock = new FakeClock();
    const logger = memoryLogger();
    const lastResort = new LastResort({ logger, clock, loop: { faults: 3, withinMs: 1_000 } });
    const loops: FaultLoop[] = [];
    lastResort.onLoop((l) => loops.push(l));
    for (let i = 0; i < 3; i++) lastResort.report('listener', new Error('x'));
    expect(loops).toEqual([]);
    lastResort.report('listener', new Error('x'));
    expect(loops).toHaveLength(1);
  });
});

describe('recoveryPacer', () => {
  it('recovers at once, then at most once per interval however many faults come', async () => {
    const clock = new FakeClock();
    let recoveries = 0;
    const pacer = recoveryPacer(clock, 30_000, () => recoveries++);
    pacer.trigger();
    expect(recoveries).toBe(1);
    for (let i = 0; i < 5; i++) {
      pacer.trigger();
      await clock.advance(1_000);
    }
    expect(recoveries).toBe(1);
    await clock.advance(25_000);
    expect(recoveries).toBe(2); // the faults of the last 30 s, recovered once
    await clock.advance(60_000);
    expect(recoveries).toBe(2);
    pacer.trigger();
    pacer.cancel();
    pacer.trigger(); // 30 s after the last recovery: at once
    expect(recoveries).toBe(3);
    pacer.trigger();
    pacer.cancel();
    await clock.advance(60_000);
    expect(recoveries).toBe(3);
  });
});
