/**
 * The demo scenario (src-sim/demo.ts) on a fake clock: ten simulated minutes, every call's script
 * played to its end, no step failing, nothing thrown out of a timer. (The two demos it replaced
 * threw `RangeError: unknown call` from a timer after 19 s and 35 s: a step ended a call that an
 * earlier step had already ended.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { demoScript, startDemo, type Demo } from '../../src-sim/demo.ts';
import type { Envelope } from '../../src-sim/index.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

let demo: Demo | undefined;
afterEach(async () => {
  await demo?.close();
  demo = undefined;
});

describe('the demo scenario', () => {
  it('runs ten simulated minutes: every call of the demo extension rings, then ends; no step fails', async () => {
    const clock = new FakeClock();
    const logger = memoryLogger();
    demo = await startDemo({ clock, logger, ringEverySec: 5, extension: '105' });
    const sent: Envelope[] = [];
    demo.sim.onSent((e) => sent.push(e));
    await clock.advance(10 * 60_000);
    // Let the last calls' scripts finish (at most 8 s of ringing plus 5 s of talk).
    await demo.close();
    expect(logger.records.filter((r) => r.level !== 'info' && r.level !== 'debug')).toEqual([]);
    expect(demo.rings).toBe(120);

    const ours = new Map<string, Array<{ to: string; state: string }>>();
    for (const e of sent) {
      const d = e.data as { call_id: string; to: string; state: string; from: string };
      if (e.event !== 30011) continue;
      if (d.state === 'ringing' && d.to === '105') ours.set(d.call_id, []);
      ours.get(d.call_id)?.push({ to: d.to, state: d.state });
    }
    expect(ours.size).toBe(120);
    // Every call that had time to finish left every party in a final state: nothing rings for ever.
    const finished = [...ours.values()].slice(0, -3);
    for (const events of finished) {
      const last = new Map(events.map((e) => [e.to, e.state]));
      expect(
        [...last.values()].every((s) => s === 'ended'),
        JSON.stringify(events),
      ).toBe(true);
    }
  });

  it('cycles through answered here, a ring group answered by a colleague, missed, and a colleague calling', () => {
    const colleagues = ['102', '103'];
    const kinds = [1, 2, 3, 4].map((n) => demoScript(n, '101', colleagues));
    expect(kinds[0]).toMatchObject({ to: ['101', '103'] }); // ring group
    expect(kinds[0]?.steps.map((s) => [s.state, s.to])).toEqual([
      ['answered', '103'],
      ['ended', '101'],
      ['ended', '103'],
    ]);
    expect(kinds[1]?.steps.map((s) => s.state)).toEqual(['ended']); // missed
    expect(kinds[2]).toMatchObject({ from: '103', to: ['101'] }); // a colleague calls
    expect(kinds[3]?.steps.map((s) => s.state)).toEqual(['answered', 'ended']);
    // Without colleagues every call is an outside caller to the demo extension alone.
    expect(demoScript(1, '101', []).to).toEqual(['101']);
  });

  it('on Yeastar P-Series: member-style reports, the ring group and queue by number, voicemail records, an attended transfer', async () => {
    const clock = new FakeClock();
    const logger = memoryLogger();
    demo = await startDemo({
      clock,
      logger,
      ringEverySec: 5,
      extension: '105',
      phoneSystem: 'yeastar-p-series',
    });
    const frames: Array<{ type: number; msg: Record<string, unknown> }> = [];
    demo.sim.onSent((_e, text) => {
      const f = JSON.parse(text) as { type: number; msg: string };
      frames.push({ type: f.type, msg: JSON.parse(f.msg) as Record<string, unknown> });
    });
    await clock.advance(10 * 60_000);
    await demo.close();
    expect(logger.records.filter((r) => r.level !== 'info' && r.level !== 'debug')).toEqual([]);
    type M = Record<string, Record<string, string>>;
    const reports = frames.filter((f) => f.type === 30011);
    // The demo extension's rings: through the Reception ring group and the Sales queue too.
    const paths = new Set(
      reports
        .flatMap((f) => f.msg.members as M[])
        .filter((m) => m.extension?.number === '105' && m.extension.member_status === 'RING')
        .map((m) => m.extension!.call_path),
    );
    expect(paths).toEqual(new Set(['', '6300', '6400']));
    // Member style: the ring group's rings each in a report of their own (a snapshot would list
    // the colleague ringing beside the demo extension).
    const together = reports.filter((f) => {
      const ringing = (f.msg.members as M[]).filter((m) => m.extension?.member_status === 'RING');
      return ringing.some((m) => m.extension!.number === '105') && ringing.length > 1;
    });
    expect(together).toEqual([]);
    // The missed callers left voicemails: the PBX's records say so.
    const voicemails = frames.filter(
      (f) => f.type === 30012 && f.msg.status === 'VOICEMAIL' && f.msg.call_to === '105',
    );
    expect(voicemails.length).toBeGreaterThanOrEqual(25);
    // Attended transfers: a colleague on HOLD, then 105 rings in the same call.
    const transfers = reports.filter((f, i) => {
      const members = f.msg.members as M[];
      if (members[0]?.extension?.member_status !== 'HOLD') return false;
      const next = reports.slice(i + 1).find((g) => g.msg.call_id === f.msg.call_id);
      return (next?.msg.members as M[] | undefined)?.[0]?.extension?.number === '105';
    });
    expect(transfers.length).toBeGreaterThanOrEqual(10);
  });
});
