import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { startSimulator } from '../../src-sim/index.ts';
import type { Envelope, Simulator, SimulatorOptions } from '../../src-sim/index.ts';
import { getToken, openSocket } from './helpers.ts';

describe('simulator traffic generator', () => {
  const sims: Simulator[] = [];
  afterEach(async () => {
    for (const s of sims.splice(0)) await s.close();
  });

  /** Runs traffic for `seconds` of fake time and returns every frame text sent. */
  async function run(
    opts: SimulatorOptions,
    traffic: Parameters<Simulator['startTraffic']>[0],
    seconds: number,
  ) {
    const clock = new FakeClock();
    const sim = await startSimulator({ clock, extensions: 300, instanceId: 'run', ...opts });
    sims.push(sim);
    const frames: string[] = [];
    sim.onSent((_e, text) => frames.push(text));
    sim.startTraffic(traffic);
    await clock.advance(seconds * 1000);
    sim.stopTraffic();
    await clock.advance(5000);
    return { sim, frames };
  }

  it('is deterministic for a seed and differs for another seed', async () => {
    const a = await run({ seed: 7 }, { ratePerSec: 40 }, 5);
    const b = await run({ seed: 7 }, { ratePerSec: 40 }, 5);
    const c = await run({ seed: 8 }, { ratePerSec: 40 }, 5);
    expect(a.frames.length).toBe(200);
    expect(b.frames).toEqual(a.frames);
    expect(c.frames).not.toEqual(a.frames);
    expect(a.sim.apiKey).toEqual(b.sim.apiKey);
    expect(a.sim.extensions).toEqual(b.sim.extensions);
  });

  it('emits at the requested rate on the sim clock and stops when told', async () => {
    const { sim, frames } = await run({}, { ratePerSec: 250 }, 4);
    expect(frames.length).toBe(1000);
    expect(sim.stats().eventsSent).toBe(1000);
  });

  it('produces realistic call sequences and never rings an excluded extension', async () => {
    const excluded = ['101', '102', '150'];
    const { frames } = await run({}, { ratePerSec: 100, excludeExtensions: excluded }, 30);
    const events = frames.map((f) => JSON.parse(f) as Envelope);
    const perParty = new Map<string, string[]>();
    const ids = new Set<string>();
    for (const e of events) {
      expect(e.event).toBe(30011);
      ids.add(e.event_id);
      const d = e.data as { call_id: string; from: string; to: string; state: string };
      expect(excluded).not.toContain(d.to);
      expect(d.from).toMatch(/^(\+\d{10,13}|\d{3})$/);
      expect(d.from).not.toBe(d.to);
      const key = `${d.call_id}/${d.to}`;
      perParty.set(key, [...(perParty.get(key) ?? []), d.state]);
    }
    expect(ids.size).toBe(events.length);
    const shapes = new Map<string, number>();
    for (const states of perParty.values()) {
      expect(states[0]).toBe('ringing');
      const shape = states.join('>');
      shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    }
    // Completed shapes seen (unfinished calls were cut off by stopTraffic).
    expect(shapes.get('ringing>ended')).toBeGreaterThan(10);
    expect(shapes.get('ringing>answered>ended')).toBeGreaterThan(10);
    expect(shapes.get('ringing>answered>hold>answered>ended')).toBeGreaterThan(3);
    const ringGroups = new Map<string, number>();
    for (const key of perParty.keys()) {
      const callId = key.split('/')[0] as string;
      ringGroups.set(callId, (ringGroups.get(callId) ?? 0) + 1);
    }
    expect([...ringGroups.values()].some((n) => n > 1)).toBe(true);
  });

  it('rings only ringTo when given, and reaches subscribed sockets', async () => {
    const sim = await startSimulator({ seed: 3, extensions: 50 });
    sims.push(sim);
    const s = await openSocket(sim, (await getToken(sim)).access_token);
    await s.subscribe([30011]);
    sim.startTraffic({ ratePerSec: 200, ringTo: ['105'] });
    await s.waitFrames(6);
    sim.stopTraffic();
    s.close();
    const events = s.frames.slice(1).map((f) => JSON.parse(f) as Envelope);
    expect(events.every((e) => e.data.to === '105')).toBe(true);
  });

  it('rejects a bad rate or a target list that excludes everything', async () => {
    const sim = await startSimulator({ extensions: 3 });
    sims.push(sim);
    expect(() => sim.startTraffic({ ratePerSec: 0 })).toThrow(RangeError);
    expect(() =>
      sim.startTraffic({ ratePerSec: 5, excludeExtensions: ['101', '102', '103'] }),
    ).toThrow(RangeError);
  });

  it('uses second timestamps with timestampUnit s', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const sim = await startSimulator({ clock, timestampUnit: 's' });
    sims.push(sim);
    expect(sim.emit(30009, {}).timestamp).toBe(Date.UTC(2026, 0, 1) / 1000);
    const ms = await startSimulator({ clock });
    sims.push(ms);
    expect(ms.emit(30009, {}).timestamp).toBe(Date.UTC(2026, 0, 1));
  });
});
