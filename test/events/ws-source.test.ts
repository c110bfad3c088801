import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src-shared/process/clock.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import { EventPipeline, type Dismiss, type Pop } from '../../src-main/core/events/pipeline.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';
import { outsideNumber, tokenManagerFor } from './support.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const USER = { extensions: ['101'], dids: ['+1 (415) 555-0100'], defaultRegion: 'US' };

interface Rig {
  sim: Simulator;
  source: WebSocketEventSource;
  pipeline: EventPipeline;
  pops: Pop[];
  dismisses: Dismiss[];
  statuses: ConnectionStatus[];
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(
  opts: {
    sim?: Simulator;
    clock?: Clock;
    heartbeatMs?: number;
    key?: Simulator['apiKey'];
    topics?: number[];
    /** Answer and connect deadlines in `clock`'s time; the defaults (15 s) otherwise. */
    timeoutMs?: number;
    rotateLeadMs?: number;
    staleRingMs?: number;
  } = {},
): Promise<Rig> {
  const sim = opts.sim ?? (await startSimulator());
  if (!opts.sim) cleanups.push(() => sim.close());
  const clock = opts.clock ?? systemClock;
  const tokens = tokenManagerFor(sim.baseUrl, opts.key ?? sim.apiKey, clock, opts.timeoutMs);
  const source = new WebSocketEventSource({
    baseUrl: sim.baseUrl,
    tokens,
    topics: opts.topics ?? [30011],
    clock,
    heartbeatMs: opts.heartbeatMs ?? 1_000,
    backoff: { baseMs: 50, capMs: 400 },
    ...(opts.timeoutMs !== undefined && { connectTimeoutMs: opts.timeoutMs }),
    ...(opts.rotateLeadMs !== undefined && { rotateLeadMs: opts.rotateLeadMs }),
    createSocket: directTransport().createSocket,
  });
  const pipeline = new EventPipeline({
    clock,
    user: USER,
    ...(opts.staleRingMs !== undefined && { staleRingMs: opts.staleRingMs }),
  });
  pipeline.attach(source);
  const r: Rig = { sim, source, pipeline, pops: [], dismisses: [], statuses: [] };
  pipeline.onPop((p) => r.pops.push(p));
  pipeline.onDismiss((d) => r.dismisses.push(d));
  source.onStatus((s) => r.statuses.push(s));
  cleanups.push(() => source.stop());
  source.start();
  return r;
}

const connected = (r: Rig) => () => r.source.status().state === 'connected';

describe('WebSocketEventSource against the simulator', () => {
  it('subscribes, pops a ring for the user and dismisses it when answered', async () => {
    const r = await rig();
    await waitFor(connected(r), 'connected');
    const other = r.sim.ring({ from: '205', to: '102' });
    const callId = r.sim.ring({ from: outsideNumber(1), to: '101' });
    await waitFor(() => r.pops.length === 1, 'pop');
    expect(r.pops[0]).toMatchObject({
      callId,
      to: '101',
      from: outsideNumber(1),
      source: 'direct',
    });
    r.sim.setCallState(other, 'answered');
    r.sim.setCallState(callId, 'answered');
    await waitFor(() => r.dismisses.length === 1, 'dismiss');
    expect(r.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '101' });
    expect(r.pops).toHaveLength(1);
  });

  it('reconnects when the server is killed and restarted on the same port', async () => {
    const first = await startSimulator();
    const port = Number(new URL(first.baseUrl).port);
    const r = await rig({ sim: first });
    await waitFor(connected(r), 'connected');
    await first.close();
    await waitFor(() => r.source.status().state !== 'connected', 'noticing the server is gone');
    const second = await startSimulator({ port });
    cleanups.push(() => second.close());
    await waitFor(connected(r), 'connected to the restarted server');
    const callId = second.ring({ from: outsideNumber(2), to: '101' });
    await waitFor(() => r.pops.length === 1, 'pop after restart');
    expect(r.pops[0]?.callId).toBe(callId);
    // The restarted server did not know the old token: refused (10002), refreshed, accepted.
    expect(second.stats().tokenExpiredRejections).toBeGreaterThanOrEqual(1);
    expect(r.statuses.map((s) => s.state)).toContain('connecting');
  });

  it('finds a stalled (half-open) socket through the heartbeat and replaces it', async () => {
    const r = await rig({ heartbeatMs: 300 });
    await waitFor(connected(r), 'connected');
    r.sim.stallSockets();
    await waitFor(
      () => r.sim.stats().wsConnections === 2 && r.source.status().state === 'connected',
      'a second socket',
      { timeoutMs: 5_000 },
    );
    expect(r.statuses.some((s) => s.state === 'connecting' && /silent/.test(s.reason ?? ''))).toBe(
      true,
    );
    const callId = r.sim.ring({ from: outsideNumber(3), to: '101' });
    await waitFor(() => r.pops.length === 1, 'pop on the new socket');
    expect(r.pops[0]?.callId).toBe(callId);
  });

  it('reconnects after close codes 1001 and 1012 and after TOKEN EXPIRED (4002)', async () => {
    const r = await rig();
    await waitFor(connected(r), 'connected');
    let n = 1;
    for (const fault of [
      () => r.sim.closeAllSockets(1001),
      () => r.sim.closeAllSockets(1012),
      () => r.sim.expireAllTokens(),
    ]) {
      const before = r.sim.stats().wsConnections;
      fault();
      await waitFor(
        () => r.sim.stats().wsConnections > before && r.source.status().state === 'connected',
        `reconnect ${n}`,
      );
      const callId = r.sim.ring({ from: outsideNumber(10 + n), to: '101' });
      await waitFor(() => r.pops.some((p) => p.callId === callId), `pop after fault ${n}`);
      n++;
    }
    expect(r.pops).toHaveLength(3);
  });

  it('rotates to a fresh token before expiry without missing or doubling a ring', async () => {
    // At 120x a 600 s token lasts 5 real seconds; client and server share the scaled clock. The
    // client's margins are scaled too, or a busy machine's delays look like faults: its default
    // 15 s deadlines would be 125 real milliseconds (a slower token request was a timeout), a ring
    // delivered 375 real ms late would be 45 s old and not popped as stale, and its 60 s rotation
    // lead would be 0.5 s. 4 minutes (2 real seconds) still comes after the token manager's
    // 5-minute refresh.
    const sim = await startSimulator({ clockSpeed: 120, accessTokenLifetimeSec: 600 });
    cleanups.push(() => sim.close());
    const r = await rig({
      sim,
      clock: sim.clock,
      heartbeatMs: 600_000,
      timeoutMs: 120 * 15_000,
      staleRingMs: 120 * 45_000,
      rotateLeadMs: 4 * 60_000,
    });
    await waitFor(connected(r), 'connected');
    const rung: string[] = [];
    const until = Date.now() + 7_000;
    let i = 0;
    while (Date.now() < until) {
      rung.push(sim.ring({ from: outsideNumber(100 + i), to: i % 2 ? '101' : '+14155550100' }));
      i++;
      await sleepReal(25);
    }
    await waitFor(() => r.pops.length >= rung.length, 'all pops', { timeoutMs: 3_000 }).catch(
      () => undefined,
    );
    const popped = r.pops.map((p) => p.callId);
    expect(r.pipeline.stats().staleRings).toBe(0);
    expect(new Set(popped).size).toBe(popped.length); // none twice
    expect([...popped].sort()).toEqual([...rung].sort()); // none missed
    expect(sim.stats().wsConnections).toBeGreaterThanOrEqual(2); // at least one rotation
    expect(r.statuses.filter((s) => s.state !== 'connected' && s.state !== 'connecting')).toEqual(
      [],
    );
    expect(r.statuses.filter((s) => s.state === 'connecting')).toHaveLength(1); // only the very first
  });

  it('pops once for a ring delivered 1,000 times', async () => {
    const r = await rig();
    await waitFor(connected(r), 'connected');
    const data = { call_id: 'dup-call', from: outsideNumber(4), to: '101', state: 'ringing' };
    for (let k = 0; k < 1_000; k++) r.sim.emit(30011, data, { eventId: 'dup-event-1' });
    r.sim.duplicateNext(1);
    r.sim.ring({ from: outsideNumber(5), to: '101', callId: 'dup-call-2' });
    await waitFor(() => r.pipeline.stats().duplicates >= 1_000, 'all duplicates received');
    expect(r.pops.map((p) => p.callId)).toEqual(['dup-call', 'dup-call-2']);
    expect(r.pipeline.stats().duplicates).toBe(1_000);
  });

  it('does not pop a ring that arrives after a later state of its call', async () => {
    const r = await rig();
    await waitFor(connected(r), 'connected');
    r.sim.reorderNext(2);
    const late = r.sim.ring({ from: outsideNumber(6), to: '101' });
    r.sim.setCallState(late, 'answered');
    const fine = r.sim.ring({ from: outsideNumber(7), to: '101' });
    await waitFor(() => r.pops.length === 1, 'the in-order ring');
    expect(r.pops[0]?.callId).toBe(fine);
    expect(r.pipeline.stats().lateRings).toBe(1);
    expect(r.dismisses).toEqual([]);
  });

  it('a refused code other than 30011 (10003) is reported as refused, the connection stays connected', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const key = sim.createApiKey({
      name: 'no-presence',
      scopes: ['extension:read', 'event:30011'],
    });
    const r = await rig({ sim, key, topics: [30011, 30009] });
    await waitFor(() => r.source.refusedTopics().length > 0, 'refused codes');
    expect(r.source.refusedTopics()).toEqual([30009]);
    expect(r.source.status()).toEqual({ state: 'connected' });
    sim.ring({ from: outsideNumber(8), to: '101' });
    await waitFor(() => r.pops.length === 1, 'pop with the scope it has');
  });

  it('reports a refused 30011 (10003) as degraded, naming the scope', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const key = sim.createApiKey({ name: 'no-calls', scopes: ['extension:read', 'event:30009'] });
    const r = await rig({ sim, key, topics: [30011, 30009] });
    await waitFor(() => r.source.status().state === 'degraded', 'degraded');
    expect(r.source.status()).toMatchObject({
      errcode: 10003,
      remedy: expect.stringContaining('event:30011'),
    });
    expect(r.source.refusedTopics()).toEqual([30011]);
  });

  it('needs attention on 10004 and stops retrying until the user acts', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const r = await rig({ sim });
    await waitFor(connected(r), 'connected');
    // The IP is removed from the allowlist while connected; the next handshake is refused with 403.
    sim.setAllowlist(sim.apiKey.key, ['10.9.9.9']);
    sim.closeAllSockets(1012);
    await waitFor(() => r.source.status().state === 'needs-attention', 'needs attention');
    expect(r.source.status()).toMatchObject({
      errcode: 10004,
      remedy: expect.stringMatching(/allowlist/),
    });
    const attempts = sim.stats().wsConnections;
    await sleepReal(600); // several back-off periods: no retry happens
    expect(sim.stats().wsConnections).toBe(attempts);
    expect(sim.stats().wsOpen).toBe(0); // the simulator sees no socket left
    sim.setAllowlist(sim.apiKey.key, []);
    r.source.wake('user');
    await waitFor(connected(r), 'connected after the user acted');
  });

  it('names the host and port the stream could not reach, and why', async () => {
    // Tokens from the simulator; the stream's address is a port where nothing listens. Before:
    // "Cannot reach the service; retrying." with no address and no cause.
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((done) => server.close(() => done()));
    const source = new WebSocketEventSource({
      baseUrl: `http://127.0.0.1:${port}`,
      tokens: tokenManagerFor(sim.baseUrl, sim.apiKey, systemClock),
      topics: [30011],
      clock: systemClock,
      heartbeatMs: 1_000,
      backoff: { baseMs: 50, capMs: 400 },
      createSocket: directTransport().createSocket,
    });
    cleanups.push(() => source.stop());
    source.start();
    await waitFor(() => source.status().state === 'offline', 'offline');
    expect(source.status()).toMatchObject({
      state: 'offline',
      reason: `127.0.0.1:${port} cannot be reached: the connection was refused (nothing listens on that port, or a firewall refuses it).`,
    });
    expect(JSON.stringify(source.status())).not.toContain('access_token');
  });

  it('needs attention when the key is not valid (10001 on get_token)', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const r = await rig({ sim, key: { ...sim.apiKey, secret: 'wrong-secret-value' } });
    await waitFor(() => r.source.status().state === 'needs-attention', 'needs attention');
    expect(r.source.status().errcode).toBe(10001);
    expect(sim.stats().wsConnections).toBe(0);
  });

  it('needs attention when the key is revoked while connected (10001 frame, close 4001)', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const r = await rig({ sim });
    await waitFor(connected(r), 'connected');
    sim.revokeKey(sim.apiKey.key);
    await waitFor(() => r.source.status().state === 'needs-attention', 'needs attention');
    expect(r.source.status().errcode).toBe(10001);
    const attempts = sim.stats().wsConnections;
    await sleepReal(500);
    expect(sim.stats().wsConnections).toBe(attempts);
  });

  it('works with timestamps in seconds', async () => {
    const sim = await startSimulator({ timestampUnit: 's' });
    cleanups.push(() => sim.close());
    const r = await rig({ sim });
    await waitFor(connected(r), 'connected');
    const callId = sim.ring({ from: outsideNumber(13), to: '101' });
    sim.setCallState(callId, 'ended');
    await waitFor(() => r.dismisses.length === 1, 'pop and dismiss');
    expect(r.pops[0]?.timestamp).toBe(Math.floor(r.pops[0]!.timestamp / 1000) * 1000);
  });

  for (const skewMin of [5, -5]) {
    it(`judges staleness on the corrected clock when the desktop clock is ${skewMin} min off`, async () => {
      const skewed: Clock = { ...systemClock, now: () => Date.now() + skewMin * 60_000 };
      const r = await rig({ clock: skewed });
      await waitFor(connected(r), 'connected');
      const fresh = r.sim.ring({ from: outsideNumber(9), to: '101' });
      await waitFor(() => r.pops.length === 1, 'fresh ring pops despite the clock');
      expect(r.pops[0]?.callId).toBe(fresh);
      // Two more events, so that the offset estimate rests on three samples (it never rests on fewer).
      for (const n of [20, 21]) r.sim.ring({ from: outsideNumber(n), to: '102' });
      await waitFor(() => r.pipeline.stats().events >= 3, 'three events');
      // A ring stamped 60 s ago (e.g. delivered late) never pops, whichever way the clock is off.
      r.sim.emit(
        30011,
        { call_id: 'old', from: outsideNumber(10), to: '101', state: 'ringing' },
        { timestamp: Date.now() - 60_000 },
      );
      const after = r.sim.ring({ from: outsideNumber(11), to: '101' });
      await waitFor(() => r.pops.length === 2, 'the next fresh ring');
      expect(r.pops.map((p) => p.callId)).toEqual([fresh, after]);
      expect(r.pipeline.stats().staleRings).toBe(1);
    });
  }
});

describe('a simulated sleep against the simulator (shared fake clock)', () => {
  it('replaces the socket at once after the wall clock jumps, with a fresh token, and pops after', async () => {
    const { FakeClock } = await import('../../rigs/fake-clock.ts');
    const clock = new FakeClock(Date.now());
    const sim = await startSimulator({ clock });
    cleanups.push(() => sim.close());
    const r = await rig({ sim, clock, heartbeatMs: 25_000 });
    await waitFor(connected(r), 'connected');
    const getTokensBefore = sim.stats().getToken + sim.stats().refreshToken;
    clock.sleep(45 * 60_000); // the laptop slept 45 minutes: the token is now expired
    await clock.advance(12_500); // the next liveness check sees the jump
    await waitFor(
      () =>
        sim.stats().wsConnections === 2 &&
        sim.stats().wsOpen === 1 &&
        r.source.status().state === 'connected',
      'replaced',
    );
    expect(sim.stats().getToken + sim.stats().refreshToken).toBeGreaterThan(getTokensBefore);
    const callId = sim.ring({ from: outsideNumber(12), to: '101' });
    await waitFor(() => r.pops.length === 1, 'pop after the sleep');
    expect(r.pops[0]?.callId).toBe(callId);
  });
});
