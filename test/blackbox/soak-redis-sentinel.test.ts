/**
 * Black box: `npm run soak -- --gateway 3 --sentinel` (issue 40 item 5) as CI or an engineer runs
 * it, cut to 45 s and to its one new fault (`--fault Sentinel`): the three relays on a real
 * Sentinel group (redis-server and redis-sentinel processes), the primary the sentinels name killed
 * and failed over, the killed node started again. The soak's own verdict (exit 0: nothing missed,
 * doubled or stale, recovered) and its JSON: the failover and the first pop after the kill
 * measured. The 20-minute runs with every gateway fault are in README.md ("Soak").
 */
import { afterEach, expect, it } from 'vitest';
import { NODE, ProcessGroup } from '../../rigs/processes.ts';
import { redisAvailable } from '../../rigs/relay/helpers.ts';
import { sentinelAvailable } from '../../rigs/relay/sentinel-support.ts';

const file = 'test/blackbox/soak-redis-sentinel.test.ts';
const haveAll = redisAvailable(file) && sentinelAvailable(file);

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

it.skipIf(!haveAll)(
  'a short gateway soak on Redis Sentinel: the primary killed, failed over, 0 missed, doubled or stale',
  async () => {
    group = new ProcessGroup();
    const soak = group.spawn('soak', NODE, [
      'test/blackbox/soak.ts',
      ...['--minutes', '0.75', '--gateway', '3', '--sentinel', '--fault', 'Sentinel'],
      ...['--seed', '4005'],
    ]);
    const exit = await soak.exit;
    const json = soak.stdout.find((l) => l.text.startsWith('{'))?.text;
    expect(json, soak.describe()).toBeDefined();
    const summary = JSON.parse(json!) as {
      redis?: string;
      sent: number;
      missed: number;
      doubled: number;
      stale: number;
      recoveryFailures: number;
      recoveries: Array<{
        fault: string;
        ms: number | null;
        failoverMs?: number;
        firstPopMs?: number;
      }>;
    };
    expect(exit.code, soak.describe()).toBe(0);
    expect(summary.redis).toBe('sentinel');
    expect(summary.sent).toBeGreaterThan(0);
    expect([summary.missed, summary.doubled, summary.stale, summary.recoveryFailures]).toEqual([
      0, 0, 0, 0,
    ]);
    expect(summary.recoveries.length).toBeGreaterThanOrEqual(1);
    for (const r of summary.recoveries) {
      expect(r.fault).toBe('redis primary killed (Sentinel failover)');
      expect(r.failoverMs).toBeGreaterThan(0);
      expect(r.firstPopMs).toBeGreaterThan(0);
      expect(r.ms).toBeGreaterThanOrEqual(r.firstPopMs!);
    }
  },
  120_000,
);
