/**
 * `screenpop-headless --demo` as the runner runs it (runHeadless, in-process so that it shares a
 * fake clock with the demo), for ten simulated minutes; sockets and HTTP are real. One pop per demo
 * ring, one dismiss per pop, nothing thrown out of a timer or a socket handler, exit code 0 when
 * told to stop. The demo it replaced died after 19 s.
 */
import { describe, expect, it } from 'vitest';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { parseHeadlessArgs } from '../../src-main/headless/args.ts';
import { runHeadless } from '../../src-main/headless/runner.ts';
import { runnerEnvironment } from '../../src-main/headless/runner-environment.ts';
import { advanceWithRealIo, FakeClock } from '../../rigs/fake-clock.ts';
import { waitFor } from '../../rigs/wait.ts';

describe('screenpop-headless --demo', () => {
  it('runs ten simulated minutes: a pop per ring, a dismiss per pop, exit 0 on stop', async () => {
    const clock = new FakeClock();
    const logger = memoryLogger();
    const lines: Array<Record<string, unknown>> = [];
    let stop!: () => void;
    const exit = runHeadless({
      args: parseHeadlessArgs(['--demo', '--extension', '104']),
      environment: runnerEnvironment({}),
      write: (text) => lines.push(JSON.parse(text) as Record<string, unknown>),
      logger,
      secrets: new SecretRegistry(),
      stopSignal: new Promise<void>((resolve) => (stop = resolve)),
      clock,
    });
    await waitFor(
      () => lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      { timeoutMs: 10_000 },
    );

    await advanceWithRealIo(clock, 10 * 60_000);
    stop();
    expect(await exit).toBe(0);

    const pops = lines.filter((l) => l.type === 'pop');
    const dismisses = lines.filter((l) => l.type === 'dismiss');
    expect(pops).toHaveLength(120); // every 5 s from 2 s on
    expect(pops.every((p) => p.to === '104')).toBe(true);
    expect(new Set(pops.map((p) => p.call_id)).size).toBe(120);
    // Every popped call was dismissed, but the last (it rang at 597 s and rings up to 8 s).
    expect(dismisses.map((d) => d.call_id).sort()).toEqual(
      pops
        .slice(0, -1)
        .map((p) => p.call_id)
        .sort(),
    );
    // Missed callers leave a voicemail (calls 2, 6, ...), every eighth call brings an SMS.
    expect(lines.filter((l) => l.type === 'voicemail')).toHaveLength(30);
    expect(lines.filter((l) => l.type === 'sms')).toHaveLength(15);
    expect(lines.filter((l) => l.type === 'status').map((l) => l.state)).toEqual([
      'connecting',
      'connected',
    ]);
    expect(logger.records.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
  });
});
