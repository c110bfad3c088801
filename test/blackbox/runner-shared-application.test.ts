/**
 * Black box, issue 32 item 3: two `screenpop-headless --phone-system yeastar-p-series` processes
 * on one API application, against the simulator as a process playing a P-Series where each
 * get_token ends the application's earlier tokens (`--token-one-sign-in`, after a public
 * integration's report; a socket opened with an ended token is closed as an expired one). Before,
 * the two knocked each other off without end; now the sign-ins are bounded, one keeps its stream
 * and pops, and the other says in its status line that another computer uses the same API
 * application, and keeps running.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { HEARTBEAT_ARGS } from './scenario.ts';
import { SimProcess, startRunner } from './services.ts';

const YEASTAR = { phoneSystem: 'yeastar-p-series' as const };

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

describe('two runners on one Yeastar API application', { timeout: 90_000 }, () => {
  it('a PBX with one sign-in per application: bounded sign-ins, one pops, the other says why', async () => {
    const sim = await new SimProcess(group, { ...YEASTAR, tokenOneSignIn: true }).start();
    const start = (extension: string) =>
      startRunner(group, {
        baseUrl: sim.baseUrl,
        key: sim.key,
        secret: sim.secret,
        extension,
        args: HEARTBEAT_ARGS,
        ...YEASTAR,
      });
    const a = start('101');
    await a.waitForState('connected');
    const b = start('102');
    // Twenty seconds of the two on one application (the issue saw 9 sign-ins in 60 s).
    await sleep(20_000);
    const { stats } = await sim.control<{ stats: { getToken: number } }>('GET', 'stats');
    console.log(
      `two runners, one sign-in per application: get_token calls in ~20 s: ${stats.getToken}`,
    );
    expect(stats.getToken).toBeLessThanOrEqual(4);

    const words = 'Another computer uses the same API application';
    const said = [a, b].filter((r) =>
      r.statuses().some((l) => String(l.reason ?? '').includes(words)),
    );
    expect(said.length).toBeGreaterThanOrEqual(1);
    const working = [a, b].find((r) => r.state() === 'connected');
    expect(working).toBeDefined();
    // The one still connected pops.
    const to = working === a ? '101' : '102';
    const callId = await sim.ring('+14155550123', to);
    await working!.waitFor(
      () => working!.pops().some((p) => p.call_id === callId),
      'the pop',
      10_000,
    );
    // Both still run (a hold is not a stop).
    expect(a.proc.running()).toBe(true);
    expect(b.proc.running()).toBe(true);
  });
});
