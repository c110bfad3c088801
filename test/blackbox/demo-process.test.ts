/**
 * Black box: `screenpop-headless --demo` as a process, for 25 real seconds (the demo it replaced
 * died after 19 s with `RangeError: unknown call` thrown out of a timer). The ten-minute runs of
 * both demo modes are on a fake clock: test/headless/demo.test.ts and test/app/demo-mode.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { RunnerProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

describe('screenpop-headless --demo as a process', () => {
  it(
    'keeps ringing for 25 s, pops and dismisses, and exits 0 on SIGTERM',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      const runner = new RunnerProcess(await group.spawnRunner('runner --demo', ['--demo']));
      await runner.waitForState('connected', 20_000);
      await sleep(25_000);
      expect(runner.proc.running(), runner.explain()).toBe(true);
      const pops = runner.pops();
      expect(pops.length).toBeGreaterThanOrEqual(4);
      expect(new Set(pops.map((p) => p.call_id)).size).toBe(pops.length);
      const dismissed = new Set(
        runner.lines.filter((l) => l.type === 'dismiss').map((l) => l.call_id),
      );
      expect(pops.slice(0, -2).every((p) => dismissed.has(p.call_id))).toBe(true);
      runner.proc.signal('SIGTERM');
      expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
      expect(runner.badLines).toEqual([]);
    },
  );
});
