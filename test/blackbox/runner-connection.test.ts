/**
 * Black box: the runner and the simulator as two processes (scenario.ts); the connection is broken
 * from outside the runner: close codes, a killed and restarted server, a stalled socket, the runner
 * itself stopped (SIGSTOP) past the server's idle timeout. After each: no ring missed, none popped
 * twice, none stale, and the runner still running.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { expectHealthy, startSimAndRunner } from './scenario.ts';

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

describe('screenpop-headless as a process: the connection breaks', { timeout: 90_000 }, () => {
  it('keeps running and popping when the server closes with 1001 and with 1012', async () => {
    const { sim, runner, ledger } = await startSimAndRunner(group);
    await ledger.ringAndSettle(sim);
    for (const code of [1001, 1012, 1012]) {
      const mark = runner.lines.length;
      await sim.control('POST', 'faults/close', { code });
      await runner.waitForDrop(mark);
      await runner.waitForState('connected');
      await ledger.ringAndSettle(sim);
    }
    // A process with nothing but a pending reconnect must still be alive seconds later.
    await sleep(2_000);
    expectHealthy(runner, ledger, 4);
  });

  it('reconnects to a server killed and restarted on the same port that forgot every token', async () => {
    const { sim, runner, ledger } = await startSimAndRunner(group);
    await ledger.ringAndSettle(sim);
    const mark = runner.lines.length;
    await sim.restart(1_500);
    await runner.waitForDrop(mark);
    await runner.waitForState('connected', 40_000);
    const { stats } = await sim.control<{ stats: { getToken: number } }>('GET', 'stats');
    // The old refresh token is unknown to the new server: the runner had to exchange its key again.
    expect(stats.getToken).toBeGreaterThanOrEqual(1);
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 2);
  });

  it('finds a half-open (stalled) connection through the heartbeat and replaces it', async () => {
    const { sim, runner, ledger } = await startSimAndRunner(group);
    const mark = runner.lines.length;
    await sim.control('POST', 'faults/stall');
    await runner.waitForDrop(mark, 20_000);
    await runner.waitForState('connected');
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 1);
  });

  it('comes back from SIGSTOP longer than the server idle timeout, after SIGCONT', async () => {
    const { sim, runner, ledger } = await startSimAndRunner(group, { idleTimeoutMs: 5_000 });
    await ledger.ringAndSettle(sim);
    const mark = runner.lines.length;
    runner.proc.signal('SIGSTOP');
    await sleep(8_000); // the simulator closes the silent socket with 4000 meanwhile
    runner.proc.signal('SIGCONT');
    await runner.waitForDrop(mark);
    await runner.waitForState('connected');
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 2);
  });
});
