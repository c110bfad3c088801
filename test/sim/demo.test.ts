/**
 * The demo scenario (src-sim/demo.ts) on a fake clock: ten simulated minutes, every call's script
 * played to its end, no step failing, nothing thrown out of a timer. (The two demos it replaced
 * threw `RangeError: unknown call` from a timer after 19 s and 35 s: a step ended a call that an
 * earlier step had already ended.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src-shared/log.ts';
import { demoScript, startDemo, type Demo } from '../../src-sim/demo.ts';
import type { Envelope } from '../../src-sim/index.ts';
import { FakeClock } from '../support/fake-clock.ts';

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
});
