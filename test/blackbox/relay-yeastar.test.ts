/**
 * Black box, Yeastar P-Series through the relay: the simulator as a process speaking the vendor's
 * wire (`--phone-system yeastar-p-series`: reports with members, no event id or time, webhooks
 * signed with X-Signature), the relay as a process with a tenant of that kind
 * (`"phoneSystem": "yeastar-p-series"`), and `screenpop-headless --phone-system yeastar-p-series
 * --event-source relay`, which hears of calls from the relay alone. Every ring reaches the runner
 * only if the relay verified the PBX's delivery, decoded the report and handed on the core's
 * envelopes; the runner's token is checked by the relay at the PBX the vendor's way.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RingLedger } from './ledger.ts';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS } from './scenario.ts';
import { relayArgs, RelayProcess, SimProcess, startRunner } from './services.ts';

const YEASTAR = 'yeastar-p-series' as const;

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

async function startRig(exclude: string[]) {
  const sim = await new SimProcess(group, { phoneSystem: YEASTAR, traffic: 3, exclude }).start();
  const relay = await new RelayProcess(group, {
    tenant: sim.tenant,
    serviceUrl: sim.baseUrl,
    phoneSystem: YEASTAR,
  }).start();
  await sim.control('POST', 'webhooks', { url: relay.webhookUrl(), secret: relay.webhookSecret });
  const runner = startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    phoneSystem: YEASTAR,
    args: [...HEARTBEAT_ARGS, ...relayArgs(relay, sim.tenant, 'relay')],
  });
  await runner.waitForState('connected', 60_000);
  return { sim, relay, runner, ledger: new RingLedger(runner) };
}

describe(
  'screenpop-headless --phone-system yeastar-p-series through the relay (processes)',
  { timeout: 120_000 },
  () => {
    it("pops and dismisses rings that reach it only as the PBX's webhooks through the relay", async () => {
      const { sim, relay, runner, ledger } = await startRig(['101']);
      for (let i = 0; i < 3; i++) await ledger.ringAndSettle(sim);
      const pop = runner.pops()[0]!;
      expect(pop).toMatchObject({ to: '101', line: '5550100' });
      // The decoder's id, the same the app derives on the direct stream.
      expect(String(pop.event_id)).toMatch(/^ys1-[0-9a-f]{40}$/);
      await runner.waitFor(
        () => runner.lines.filter((l) => l.type === 'dismiss').length === 3,
        'three dismisses',
        15_000,
      );
      expectHealthy(runner, ledger, 3);
      // The background traffic's reports were taken too, and none was refused.
      const rejected = relay.proc
        .stderr()
        .split('\n')
        .filter((l) => l.includes('webhook rejected'));
      expect(rejected).toEqual([]);
    });

    it('a ring group answered by a colleague is dismissed through the relay', async () => {
      const { sim, runner } = await startRig(['101', '102']);
      const callId = await sim.ring('+14155550123', ['101', '102']);
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 15_000);
      await sim.setState(callId, 'answered', '102');
      await runner.waitFor(
        () => runner.lines.some((l) => l.type === 'dismiss' && l.call_id === callId),
        'the dismiss',
        15_000,
      );
      await sim.setState(callId, 'ended');
      await sleep(500);
      expect(runner.pops().filter((p) => p.call_id === callId)).toHaveLength(1);
      expect(runner.proc.running(), runner.explain()).toBe(true);
    });
  },
);
