/**
 * Black box, Yeastar P-Series: the simulator as a process speaking the vendor's wire
 * (`node src-sim/cli.ts --phone-system yeastar-p-series`: the token in the query, report frames
 * with members and no event id or time, its errcodes) and `screenpop-headless --phone-system
 * yeastar-p-series` as another, judged by its stdout lines alone. Each scenario ends with the
 * ledger's verdict: every ring popped, once, fresh, and the runner still running.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RingLedger } from './ledger.ts';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS, startSimAndRunner } from './scenario.ts';
import { SimProcess, startRunner } from './services.ts';

const YEASTAR = { phoneSystem: 'yeastar-p-series' as const };

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

describe(
  'screenpop-headless --phone-system yeastar-p-series as a process',
  { timeout: 90_000 },
  () => {
    it('pops direct rings with the caller and the line dialled, and dismisses them', async () => {
      const { sim, runner, ledger } = await startSimAndRunner(group, YEASTAR);
      // SMS is said once to be not offered; nothing is subscribed for it. Voicemail rides on the
      // PBX's call records (30012), so it is offered.
      expect(runner.lines.filter((l) => l.type === 'feature')).toEqual([
        expect.objectContaining({ feature: 'sms', state: 'not-offered', code: null }),
      ]);
      for (let i = 0; i < 3; i++) await ledger.ringAndSettle(sim);
      const pop = runner.pops()[0]!;
      expect(pop).toMatchObject({ to: '101', line: '5550100', caller_name: null });
      expect(String(pop.event_id)).toMatch(/^ys1-[0-9a-f]{40}$/);
      // The runner stamps the ring with the time it arrived: within a second of the pop line.
      expect(Math.abs(pop.at - Number(pop.timestamp))).toBeLessThan(1_000);
      await runner.waitFor(
        () => runner.lines.filter((l) => l.type === 'dismiss').length === 3,
        'three dismisses',
        10_000,
      );
      expectHealthy(runner, ledger, 3);
    });

    it('a ring group of two extensions pops once and is dismissed when the colleague answers', async () => {
      const { sim, runner, ledger } = await startSimAndRunner(group, {
        ...YEASTAR,
        exclude: ['101', '102'],
      });
      const callId = await sim.ring('+14155550123', ['101', '102']);
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      await sim.setState(callId, 'answered', '102');
      await runner.waitFor(
        () => runner.lines.some((l) => l.type === 'dismiss' && l.call_id === callId),
        'the dismiss',
        10_000,
      );
      expect(runner.lines.find((l) => l.type === 'dismiss')).toMatchObject({
        call_id: callId,
        state: 'answered',
        to: '102',
      });
      await sim.setState(callId, 'ended');
      await sleep(500);
      expect(runner.pops().filter((p) => p.call_id === callId)).toHaveLength(1);
      expect(ledger.figures().unexpected).toEqual([callId]); // rung by hand, not by the ledger
    });

    it('an internal call is named from the extension list', async () => {
      const { sim, runner } = await startSimAndRunner(group, YEASTAR);
      const { data } = await sim.control<{
        data: Array<{ number: string; caller_id_name: string }>;
      }>('GET', 'extensions');
      const colleague = data.find((e) => e.number === '104')!;
      await sim.ring('104', '101');
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      expect(runner.pops()[0]).toMatchObject({
        from: '104',
        caller_name: colleague.caller_id_name,
        line: null,
      });
    });

    it('the same report sent 50 times pops once', async () => {
      const { sim, runner, ledger } = await startSimAndRunner(group, YEASTAR);
      await sim.control('POST', 'faults/duplicate', { n: 1, copies: 50 });
      const callId = await ledger.ring(sim);
      await runner.waitFor(() => ledger.popCount(callId) > 0, 'the pop', 10_000);
      await sleep(1_000);
      expect(ledger.popCount(callId)).toBe(1);
      await ledger.settle(sim);
      expectHealthy(runner, ledger, 1);
    });

    it('reconnects after 1012 and finds a half-open socket by its heartbeat', async () => {
      const { sim, runner, ledger } = await startSimAndRunner(group, YEASTAR);
      let mark = runner.lines.length;
      await sim.control('POST', 'faults/close', { code: 1012 });
      await runner.waitForDrop(mark);
      await runner.waitForState('connected');
      await ledger.ringAndSettle(sim);
      mark = runner.lines.length;
      await sim.control('POST', 'faults/stall');
      await runner.waitForDrop(mark, 20_000);
      expect(runner.lines.slice(mark).some((l) => String(l.reason).includes('silent'))).toBe(true);
      await runner.waitForState('connected');
      await ledger.ringAndSettle(sim);
      expectHealthy(runner, ledger, 2);
    });

    it('refreshes its token before it expires: the stream never drops', async () => {
      const sim = await new SimProcess(group, {
        ...YEASTAR,
        tokenLifetimeSec: 12,
        traffic: 3,
        exclude: ['101'],
      }).start();
      const runner = startRunner(group, {
        baseUrl: sim.baseUrl,
        key: sim.key,
        secret: sim.secret,
        args: HEARTBEAT_ARGS,
        ...YEASTAR,
      });
      await runner.waitForState('connected');
      const ledger = new RingLedger(runner);
      const mark = runner.lines.length;
      // Three token lifetimes, ringing all along.
      for (let i = 0; i < 6; i++) {
        await ledger.ringAndSettle(sim);
        await sleep(5_000);
      }
      const { stats } = await sim.control<{
        stats: { refreshToken: number; getToken: number; tokenExpiredRejections: number };
      }>('GET', 'stats');
      expect(stats.refreshToken).toBeGreaterThanOrEqual(2);
      expect(stats.tokenExpiredRejections).toBe(0);
      expect(runner.lines.slice(mark).filter((l) => l.type === 'status')).toEqual([]);
      expectHealthy(runner, ledger, 6);
    });

    it("a wrong Client Secret stops with exit 3 and says so in the phone system's terms", async () => {
      const sim = await new SimProcess(group, YEASTAR).start();
      const runner = startRunner(group, {
        baseUrl: sim.baseUrl,
        key: sim.key,
        secret: 'not-the-secret',
        args: HEARTBEAT_ARGS,
        ...YEASTAR,
      });
      expect((await runner.proc.exit).code).toBe(3);
      expect(runner.statuses().at(-1)).toMatchObject({
        state: 'needs-attention',
        errcode: -1,
        reason: expect.stringContaining('Client ID or Client Secret'),
      });
      expect(runner.proc.stderr()).not.toContain('not-the-secret');
    });
  },
);

/**
 * The same processes, the simulator sending `--report-style member` (its default on Yeastar): the
 * reports as real P-Series PBXs were captured sending them (issue 32): the caller in a report of its
 * own before the ring, each extension's ring and answer beside the caller, each hang-up alone. The
 * background traffic sends the same shapes.
 */
describe(
  'screenpop-headless --phone-system yeastar-p-series on member-style reports',
  { timeout: 90_000 },
  () => {
    const MEMBER = { ...YEASTAR, reportStyle: 'member' as const };

    it('pops each ring with the caller named (from its own earlier report) and the line, and dismisses it', async () => {
      const { sim, runner, ledger } = await startSimAndRunner(group, MEMBER);
      for (let i = 0; i < 3; i++) await ledger.ringAndSettle(sim);
      // The ledger's first three callers, in order.
      expect(runner.pops().map((p) => p.from)).toEqual([
        '+14155550123',
        '+442079460958',
        '+12125550187',
      ]);
      expect(runner.pops()[0]).toMatchObject({ to: '101', line: '5550100' });
      await runner.waitFor(
        () => runner.lines.filter((l) => l.type === 'dismiss').length === 3,
        'three dismisses',
        10_000,
      );
      expectHealthy(runner, ledger, 3);
    });

    it("a ring group: the colleagues' rings and one's hang-up leave mine ringing; a colleague's answer dismisses it", async () => {
      const { sim, runner, ledger } = await startSimAndRunner(group, {
        ...MEMBER,
        exclude: ['101', '102', '103'],
      });
      const callId = await sim.ring('+14155550123', ['101', '102', '103']);
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      const dismissed = () =>
        runner.lines.filter((l) => l.type === 'dismiss' && l.call_id === callId);
      await sleep(1_000); // 102's and 103's rings, each alone, came after mine
      expect(dismissed(), runner.explain()).toEqual([]);
      await sim.setState(callId, 'ended', '103');
      await sleep(1_000);
      expect(dismissed(), runner.explain()).toEqual([]);
      await sim.setState(callId, 'answered', '102');
      await runner.waitFor(() => dismissed().length > 0, 'the dismiss', 10_000);
      expect(dismissed()[0]).toMatchObject({ call_id: callId, state: 'answered', to: '102' });
      await sim.setState(callId, 'ended');
      await sleep(500);
      expect(runner.pops().filter((p) => p.call_id === callId)).toEqual([
        expect.objectContaining({ from: '+14155550123', to: '101', line: '5550100' }),
      ]);
      expect(dismissed()).toHaveLength(1);
      expect(ledger.figures().unexpected).toEqual([callId]); // rung by hand, not by the ledger
      expect(runner.proc.running(), runner.explain()).toBe(true);
    });
  },
);

/**
 * What a real team meets on a P-Series (issue 32 items 2 and 4), the simulator in its default
 * (member-style) reports: calls through a queue and a ring group named from the PBX's lists, an
 * extension ringing on two devices, and an attended transfer in the same call.
 */
describe(
  'screenpop-headless --phone-system yeastar-p-series: queues, two devices, transfers',
  { timeout: 90_000 },
  () => {
    const ringVia = async (sim: SimProcess, from: string, to: string[], via: string) =>
      (await sim.control<{ call_id: string }>('POST', 'ring', { from, to, via })).call_id;

    it("a call through the Sales queue or the Reception ring group pops with the group's name", async () => {
      const { sim, runner } = await startSimAndRunner(group, YEASTAR);
      const queued = await ringVia(sim, '+14155550123', ['101', '102'], '6400');
      await runner.waitFor(() => runner.pops().length === 1, 'the first pop', 10_000);
      await sim.setState(queued, 'ended');
      const grouped = await ringVia(sim, '+442079460958', ['101', '103'], '6300');
      await runner.waitFor(() => runner.pops().length === 2, 'the second pop', 10_000);
      await sim.setState(grouped, 'ended');
      expect(runner.pops()).toEqual([
        expect.objectContaining({
          call_id: queued,
          to: '101',
          group_kind: 'queue',
          group_name: 'Sales',
        }),
        expect.objectContaining({
          call_id: grouped,
          to: '101',
          group_kind: 'ring-group',
          group_name: 'Reception',
        }),
      ]);
      expect(runner.badLines).toEqual([]);
    });

    it('my extension rings on two devices: one device stopping leaves the pop; both stopping dismiss it', async () => {
      const { sim, runner } = await startSimAndRunner(group, YEASTAR);
      const callId = (
        await sim.control<{ call_id: string }>('POST', 'ring', {
          from: '+14155550123',
          to: '101',
          devices: 2,
        })
      ).call_id;
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      const dismissed = () =>
        runner.lines.filter((l) => l.type === 'dismiss' && l.call_id === callId);
      // Linkus declines: that leg's BYE alone. The desk phone still rings.
      await sim.control('POST', 'state', { callId, state: 'ended', to: '101', device: 2 });
      await sleep(1_000);
      expect(dismissed(), runner.explain()).toEqual([]);
      await sim.control('POST', 'state', { callId, state: 'ended', to: '101', device: 1 });
      await runner.waitFor(() => dismissed().length === 1, 'the dismiss', 10_000);
      expect(dismissed()[0]).toMatchObject({ state: 'ended', to: '101' });
      expect(runner.pops()).toHaveLength(1);
      expect(runner.proc.running(), runner.explain()).toBe(true);
    });

    it('an attended transfer: the colleague holds the caller and rings me; I get the original caller', async () => {
      const { sim, runner } = await startSimAndRunner(group, {
        ...YEASTAR,
        exclude: ['101', '102'],
      });
      const callId = await sim.ring('+14155550123', '102');
      await sim.setState(callId, 'answered', '102');
      await sleep(300);
      await sim.control('POST', 'transfer', { callId, from: '102', to: '101', attended: true });
      await runner.waitFor(() => runner.pops().length === 1, 'the pop', 10_000);
      expect(runner.pops()[0]).toMatchObject({
        call_id: callId,
        from: '+14155550123',
        to: '101',
        line: '5550100',
        // Who passed it on, by number and by the extension list's name.
        transferred_by: '102',
        transferred_by_name: expect.any(String),
      });
      await sim.setState(callId, 'answered', '101');
      await runner.waitFor(
        () => runner.lines.some((l) => l.type === 'dismiss' && l.call_id === callId),
        'the dismiss',
        10_000,
      );
      await sim.setState(callId, 'ended', '102');
      await sim.setState(callId, 'ended');
      await sleep(500);
      expect(runner.pops()).toHaveLength(1);
      expect(runner.proc.running(), runner.explain()).toBe(true);
    });
  },
);
