/**
 * Black box, Yeastar P-Series: the PBX's company contacts as a caller-name source of
 * `screenpop-headless` (docs/phone-systems/yeastar-p-series.md section 9), the simulator as a
 * process answering company_contact/list, queue/list and ringgroup/list with its token in the
 * query. Judged by the runner's stdout lines alone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessGroup } from '../../rigs/processes.ts';
import { HEARTBEAT_ARGS } from './scenario.ts';
import { SimProcess, startRunner } from './services.ts';
import { SIM_COMPANY_CONTACTS } from '../../src-sim/directory.ts';

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

async function simAndRunner(args: string[] = []) {
  const sim = await new SimProcess(group, { phoneSystem: 'yeastar-p-series' }).start();
  const runner = startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args: [...HEARTBEAT_ARGS, ...args],
    phoneSystem: 'yeastar-p-series',
  });
  await runner.waitForState('connected');
  return { sim, runner };
}

describe(
  'screenpop-headless names callers from the PBX’s company contacts',
  { timeout: 60_000 },
  () => {
    const joseph = SIM_COMPANY_CONTACTS[0];

    it('an outside caller in the company contacts is named, with the company (the default on Yeastar)', async () => {
      const { sim, runner } = await simAndRunner();
      await sim.ring(joseph.business, '101');
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      expect(runner.pops()[0]).toMatchObject({
        from: joseph.business,
        caller_name: joseph.name,
        caller_company: joseph.company,
        number_kind: 'work',
        name_source: 'pbx-contacts',
        group_kind: null,
        group_name: null,
      });
      expect(runner.badLines).toEqual([]);
    });

    it('--directory extensions leaves the company contacts out', async () => {
      const { sim, runner } = await simAndRunner(['--directory', 'extensions']);
      await sim.ring(joseph.business, '101');
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      expect(runner.pops()[0]).toMatchObject({ caller_name: null, name_source: 'none' });
    });
  },
);
