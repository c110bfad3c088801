/**
 * What every black-box scenario of the runner starts from and ends with: the simulator as a
 * process (`node src-sim/cli.ts --control`, background traffic on other extensions) and the runner
 * as another (`node bin/screenpop-headless.js`, the build, heartbeat every 2 s so that a dead connection is
 * found in 4-5 s instead of 50-62 s; everything else is the default).
 */
import { expect } from 'vitest';
import { RingLedger } from './ledger.ts';
import type { ProcessGroup } from '../../rigs/processes.ts';
import { SimProcess, startRunner, type RunnerProcess, type SimOptions } from './services.ts';

export const HEARTBEAT_ARGS = ['--heartbeat-sec', '2'];

export async function startSimAndRunner(
  group: ProcessGroup,
  simOptions: SimOptions = {},
): Promise<{ sim: SimProcess; runner: RunnerProcess; ledger: RingLedger }> {
  const sim = await new SimProcess(group, { traffic: 3, exclude: ['101'], ...simOptions }).start();
  const runner = await startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args: HEARTBEAT_ARGS,
    ...(simOptions.phoneSystem ? { phoneSystem: simOptions.phoneSystem } : {}),
  });
  await runner.waitForState('connected');
  return { sim, runner, ledger: new RingLedger(runner) };
}

/** No ring missed, none popped twice, none stale, nothing unexpected, and the runner still running. */
export function expectHealthy(runner: RunnerProcess, ledger: RingLedger, minRings: number): void {
  const figures = ledger.figures();
  expect(figures.sent).toBeGreaterThanOrEqual(minRings);
  expect(figures, runner.explain()).toMatchObject({
    missed: [],
    doubled: [],
    stale: [],
    unexpected: [],
  });
  expect(runner.proc.running(), runner.explain()).toBe(true);
  expect(runner.badLines).toEqual([]);
}
