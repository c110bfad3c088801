/**
 * ScreenpopEngine: modes and hot standby. The direct source talks to the simulator; the relay
 * source here is a stand-in fed with the simulator's own frames (what the webhook relay would
 * forward), a few ms later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src-shared/process/clock.ts';
import type { ConnectionStatus, EventSource } from '../../src-main/core/events/contracts.ts';
import type { Pop } from '../../src-main/core/events/pipeline.ts';
import { ScreenpopEngine } from '../../src-main/core/engine.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { waitFor } from '../../rigs/wait.ts';
import { outsideNumber, tokenManagerFor } from './support.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const USER = { extensions: ['101'], dids: [], defaultRegion: 'US' };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A relay stand-in: forwards every frame the simulator sends, 5 ms later, while "up". */
function relayFrom(sim: Simulator) {
  const frames = new Set<(text: string, at: number) => void>();
  const statuses = new Set<(s: ConnectionStatus) => void>();
  let up = false;
  let current: ConnectionStatus = { state: 'offline', reason: 'Not started.' };
  const setStatus = (s: ConnectionStatus) => {
    current = s;
    statuses.forEach((l) => l(s));
  };
  const off = sim.onSent((_e, text) => {
    if (up) setTimeout(() => up && frames.forEach((l) => l(text, Date.now())), 5);
  });
  cleanups.push(off);
  const source: EventSource & { setUp(v: boolean): void } = {
    name: 'relay',
    start() {
      up = true;
      setStatus({ state: 'connected' });
    },
    async stop() {
      up = false;
    },
    wake() {},
    onFrame(l) {
      frames.add(l);
      return () => frames.delete(l);
    },
    onStatus(l) {
      statuses.add(l);
      return () => statuses.delete(l);
    },
    status: () => current,
    setUp(v) {
      up = v;
      setStatus(v ? { state: 'connected' } : { state: 'offline', reason: 'relay unreachable' });
    },
  };
  return source;
}

async function engineWith(
  mode: 'auto' | 'direct' | 'relay',
  sim: Simulator,
  clock: Clock = systemClock,
) {
  const relay = relayFrom(sim);
  const engine = new ScreenpopEngine({
    baseUrl: sim.baseUrl,
    tokens: tokenManagerFor(sim.baseUrl, sim.apiKey, clock),
    clock,
    user: USER,
    mode,
    createRelaySource: () => relay,
    heartbeatMs: 1_000,
    createSocket: directTransport().createSocket,
    fetch: directTransport().fetch,
  });
  const pops: Pop[] = [];
  const statuses: ConnectionStatus[] = [];
  engine.onPop((p) => pops.push(p));
  engine.onStatus((s) => statuses.push(s));
  cleanups.push(() => engine.stop());
  engine.start();
  return { engine, relay, pops, statuses };
}

describe('ScreenpopEngine', () => {
  it("'auto' with a relay: both sources attached, one pop per ring, and rings survive either source failing", async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const t = await engineWith('auto', sim);
    await waitFor(() => t.engine.status().state === 'connected', 'connected');
    expect(Object.keys(t.engine.sourceStatuses())).toEqual(['direct', 'relay']);

    const a = sim.ring({ from: outsideNumber(1), to: '101' });
    await waitFor(() => t.engine.stats().duplicates >= 1, 'the relay copy');
    expect(t.pops.map((p) => p.callId)).toEqual([a]);

    t.relay.setUp(false);
    expect(t.engine.status()).toMatchObject({
      state: 'degraded',
      reason: 'relay: relay unreachable',
    });
    const b = sim.ring({ from: outsideNumber(2), to: '101' });
    await waitFor(() => t.pops.length === 2, 'pop through the direct socket alone');

    t.relay.setUp(true);
    sim.stallSockets(); // the direct socket goes half-open; the relay carries on
    const c = sim.ring({ from: outsideNumber(3), to: '101' });
    await waitFor(() => t.pops.length === 3, 'pop through the relay alone');
    expect(t.pops.map((p) => [p.callId, p.source])).toEqual([
      [a, 'direct'],
      [b, 'direct'],
      [c, 'relay'],
    ]);
  });

  it("'direct' ignores the relay; 'relay' opens no WebSocket", async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const direct = await engineWith('direct', sim);
    await waitFor(() => direct.engine.status().state === 'connected', 'connected');
    expect(Object.keys(direct.engine.sourceStatuses())).toEqual(['direct']);
    await direct.engine.stop();
    const before = sim.stats().wsConnections;
    const relayOnly = await engineWith('relay', sim);
    expect(relayOnly.engine.status().state).toBe('connected');
    sim.ring({ from: outsideNumber(4), to: '101' });
    await waitFor(() => relayOnly.pops.length === 1, 'pop from the relay');
    expect(sim.stats().wsConnections).toBe(before);
  });

  it("'relay' without a relay source is refused", () => {
    expect(
      () =>
        new ScreenpopEngine({
          baseUrl: 'https://x.example',
          tokens: { getToken: async () => ({ value: 'x', expiresAt: 0 }), invalidate() {} },
          clock: systemClock,
          user: USER,
          mode: 'relay',
          createSocket: directTransport().createSocket,
          fetch: directTransport().fetch,
        }),
    ).toThrow(/relay/);
  });

  it('reads the server clock on start, so an old ring replayed first does not pop, even with the desktop clock 5 min ahead', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const skewed: Clock = { ...systemClock, now: () => Date.now() + 5 * 60_000 };
    const t = await engineWith('relay', sim, skewed);
    await waitFor(() => t.engine.stats().clockOffsetMs !== null, 'the server clock reference');
    // The desktop is ~5 min ahead of the server (the simulator runs on the real clock).
    expect(Math.abs((t.engine.stats().clockOffsetMs ?? 0) - 5 * 60_000)).toBeLessThan(2_000);
    const data = (id: string) => ({
      call_id: id,
      from: outsideNumber(5),
      to: '101',
      state: 'ringing',
    });
    sim.emit(30011, data('replayed'), { timestamp: Date.now() - 10 * 60_000 });
    sim.emit(30011, data('live'));
    await waitFor(() => t.engine.stats().events === 2, 'both events');
    expect(t.pops.map((p) => p.callId)).toEqual(['live']);
    expect(t.engine.stats().staleRings).toBe(1);
  });

  it('reads the server clock again while quiet, so a replay after 15 silent minutes is still judged against the server', async () => {
    const clock = new FakeClock();
    let probes = 0;
    const fetchDate: typeof fetch = async () => {
      probes++;
      return new Response(null, { headers: { date: new Date(clock.now()).toUTCString() } });
    };
    const frames = new Set<(text: string, at: number) => void>();
    const relay: EventSource = {
      name: 'relay',
      start() {},
      async stop() {},
      wake() {},
      onFrame(l) {
        frames.add(l);
        return () => frames.delete(l);
      },
      onStatus: () => () => {},
      status: () => ({ state: 'connected' }),
    };
    const engine = new ScreenpopEngine({
      baseUrl: 'https://acme.example.com',
      tokens: { getToken: () => Promise.reject(new Error('not used')), invalidate() {} },
      clock,
      user: USER,
      mode: 'relay',
      createRelaySource: () => relay,
      createSocket: () => {
        throw new Error('no socket in relay mode');
      },
      fetch: fetchDate,
    });
    const pops: Pop[] = [];
    engine.onPop((p) => pops.push(p));
    engine.start();
    await flushMicrotasks();
    await clock.advance(15 * 60_000); // nothing at all for 15 minutes (a quiet relay-only user)
    // The relay reconnects and replays a ring missed two minutes ago.
    const missed = JSON.stringify({
      event: 30011,
      timestamp: clock.now() - 2 * 60_000,
      tenant: 'a',
      event_id: 'missed',
      data: { call_id: 'missed', from: '+14155550123', to: '101', state: 'ringing' },
    });
    for (const l of frames) l(missed, clock.now());
    expect(pops).toEqual([]);
    expect(probes).toBeGreaterThan(1);
    await engine.stop();
    expect(clock.pendingTimers()).toBe(0);
  });
});
