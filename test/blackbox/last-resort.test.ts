/**
 * Black box: an unexpected error inside a running screenpop-headless (thrown from a timer, and a
 * rejected promise nobody handles, injected by a preloaded module: test/blackbox/fixtures/) does
 * not end it. It prints a `fault` line for each, rebuilds its connection, and rings pop after as
 * before. Without the last resort the process exits at the first one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RingLedger } from './ledger.ts';
import { ProcessGroup } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS } from './scenario.ts';
import { RunnerProcess, SimProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

describe('screenpop-headless last resort', () => {
  it(
    'survives an error thrown from a timer and an unhandled rejection, says so, and keeps popping',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      const sim = await new SimProcess(group, {}).start();
      const trigger = join(group.tempDir('blackbox-faults-'), 'now');
      const runner = new RunnerProcess(
        await group.spawnRunner(
          'runner (faults injected)',
          ['--base-url', sim.baseUrl, '--extension', '101', ...HEARTBEAT_ARGS],
          {
            nodeArgs: ['--import', './test/blackbox/fixtures/inject-faults.ts'],
            env: {
              ...process.env,
              SCREENPOP_API_KEY: sim.key,
              SCREENPOP_API_SECRET: sim.secret,
              INJECT_FAULTS_FILE: trigger,
            },
          },
        ),
      );
      await runner.waitForState('connected');
      const ledger = new RingLedger(runner);
      await ledger.ringAndSettle(sim);

      const mark = runner.lines.length;
      writeFileSync(trigger, '');
      await runner.waitFor(
        () => runner.lines.filter((l) => l.type === 'fault').length === 2,
        'two fault lines',
        10_000,
      );
      expect(runner.lines.filter((l) => l.type === 'fault')).toEqual([
        expect.objectContaining({
          origin: 'uncaughtException',
          message: 'Error: injected: thrown from a timer',
          count: 1,
        }),
        expect.objectContaining({
          origin: 'unhandledRejection',
          message: 'Error: injected: a rejection nobody handles',
          count: 2,
        }),
      ]);
      // The connection was rebuilt: it left `connected` and came back.
      await runner.waitForDrop(mark);
      await runner.waitForState('connected');
      await ledger.ringAndSettle(sim);
      await ledger.ringAndSettle(sim);
      expectHealthy(runner, ledger, 3);
      expect(runner.proc.stderr()).toContain('unexpected error caught by the last resort');
      expect(runner.proc.stderr()).not.toContain(sim.secret);
    },
  );
});
