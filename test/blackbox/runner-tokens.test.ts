/**
 * Black box: the runner and the simulator as two processes (scenario.ts); the token calls fail from
 * outside the runner: get_token answering 503 at start, tokens expired mid-stream, 429 and 5xx
 * storms. After each: no ring missed, none popped twice, none stale, and the runner still running.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RingLedger } from './ledger.ts';
import { ProcessGroup } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS, startSimAndRunner } from './scenario.ts';
import { SimProcess, startRunner } from './services.ts';

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

describe('screenpop-headless as a process: the token calls fail', { timeout: 90_000 }, () => {
  it('keeps running through get_token answering 503 at start, and connects once it works', async () => {
    const sim = await new SimProcess(group, {}).start();
    await sim.control('POST', 'faults/fail-http', { status: 503, count: 3, target: 'api' });
    const runner = startRunner(group, {
      baseUrl: sim.baseUrl,
      key: sim.key,
      secret: sim.secret,
      args: HEARTBEAT_ARGS,
    });
    await runner.waitForState('offline');
    await runner.waitForState('connected', 40_000);
    const ledger = new RingLedger(runner);
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 1);
  });

  it('renews its token when the server expires it mid-stream (TOKEN EXPIRED, 4002)', async () => {
    const { sim, runner, ledger } = await startSimAndRunner(group);
    for (let i = 0; i < 3; i++) {
      const mark = runner.lines.length;
      await sim.control('POST', 'faults/expire-tokens');
      await runner.waitForDrop(mark);
      await runner.waitForState('connected');
      await ledger.ringAndSettle(sim);
    }
    const { stats } = await sim.control<{ stats: { refreshToken: number; getToken: number } }>(
      'GET',
      'stats',
    );
    expect(stats.refreshToken + stats.getToken).toBeGreaterThanOrEqual(4);
    expectHealthy(runner, ledger, 3);
  });

  // Four storms of three failed token calls, each waited out by the real back-off (about 40 s on
  // a quiet machine, 113 s at load 22): a budget with room, not a timed assertion.
  it('rides out 429 and 5xx storms on the token calls', { timeout: 240_000 }, async () => {
    const { sim, runner, ledger } = await startSimAndRunner(group);
    for (const status of [429, 500, 502, 503]) {
      const mark = runner.lines.length;
      await sim.control('POST', 'faults/fail-http', {
        status,
        count: 3,
        target: 'api',
        ...(status === 429 ? { retryAfterSec: 1 } : {}),
      });
      // The token dies now, so the runner must go through the failing token calls to come back.
      await sim.control('POST', 'faults/expire-tokens');
      await runner.waitForDrop(mark);
      await runner.waitForState('connected', 60_000);
      await ledger.ringAndSettle(sim);
    }
    expectHealthy(runner, ledger, 4);
  });
});
