import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { startSimulator } from '../../src-sim/index.ts';
import type { Simulator, SimulatorOptions } from '../../src-sim/index.ts';
import { getToken, openSocket, rejectionOf } from './helpers.ts';
import { waitFor } from '../../rigs/wait.ts';
import type { TestSocket } from './helpers.ts';

describe('simulator subscribe WebSocket', () => {
  let sim: Simulator;
  const sockets: TestSocket[] = [];
  const start = async (opts: SimulatorOptions = {}) => (sim = await startSimulator(opts));
  const open = async (token: string | undefined, opts?: { viaQuery?: boolean }) => {
    const s = await openSocket(sim, token, opts);
    sockets.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close();
    await sim.close();
  });

  it('accepts a bearer handshake, acknowledges topic_list and delivers subscribed events only', async () => {
    await start();
    const { access_token } = await getToken(sim);
    const s = await open(access_token);
    expect(await s.subscribe([30011])).toEqual({ errcode: 0, errmsg: 'SUCCESS' });
    sim.emit(30009, { extension: '101', presence: 'away' });
    const callId = sim.ring({ from: '+14155550100', to: ['101', '102'] });
    const frames = await s.waitFrames(3);
    const events = frames.slice(1).map((f) => JSON.parse(f));
    expect(events.map((e) => [e.event, e.data.to, e.data.state, e.data.call_id])).toEqual([
      [30011, '101', 'ringing', callId],
      [30011, '102', 'ringing', callId],
    ]);
    expect(Object.keys(events[0])).toEqual(['event', 'timestamp', 'tenant', 'data', 'event_id']);
    expect(events[0].tenant).toBe('acme');
    expect(events[0].event_id).not.toBe(events[1].event_id);
    expect(sim.stats()).toMatchObject({ wsConnections: 1, wsOpen: 1 });
  });

  it('frames small, medium and large events correctly (all three WebSocket length encodings)', async () => {
    await start();
    const s = await open((await getToken(sim)).access_token);
    await s.subscribe([30031]);
    const sizes = [1, 300, 70_000];
    const sent = sizes.map((n) => sim.emit(30031, { text: 'é'.repeat(n) }));
    const frames = await s.waitFrames(4);
    expect(frames.slice(1)).toEqual(sent.map((e) => JSON.stringify(e)));
  });

  it('also accepts ?access_token= in the URL', async () => {
    await start();
    const { access_token } = await getToken(sim);
    const s = await open(access_token, { viaQuery: true });
    expect(await s.subscribe([30011])).toMatchObject({ errcode: 0 });
  });

  it('rejects handshakes as plain HTTP: 401 10002 for missing, unknown or expired tokens', async () => {
    const clock = new FakeClock();
    await start({ clock });
    expect(await rejectionOf(openSocket(sim, undefined))).toEqual({
      status: 401,
      body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' },
    });
    expect(await rejectionOf(openSocket(sim, 'at_unknown'))).toEqual({
      status: 401,
      body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' },
    });
    const { access_token } = await getToken(sim);
    await clock.advance(1_800_000);
    expect(await rejectionOf(openSocket(sim, access_token))).toEqual({
      status: 401,
      body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' },
    });
    expect(sim.stats().tokenExpiredRejections).toBe(3);
  });

  it('rejects handshakes with 403 10004 outside the allowlist and 401 10001 for a revoked key', async () => {
    await start();
    const { access_token } = await getToken(sim);
    sim.setAllowlist(sim.apiKey.key, ['203.0.113.7']);
    const blocked = await rejectionOf(openSocket(sim, access_token));
    expect(blocked.status).toBe(403);
    expect(blocked.body.errcode).toBe(10004);
    sim.setAllowlist(sim.apiKey.key, []);
    sim.revokeKey(sim.apiKey.key);
    const revoked = await rejectionOf(openSocket(sim, access_token));
    expect(revoked.status).toBe(401);
    expect(revoked.body.errcode).toBe(10001);
  });

  it('answers 10003 for codes outside the key scope, stays open and never delivers them', async () => {
    await start();
    const key = sim.createApiKey({ name: 'calls only', scopes: ['event:30011'] });
    const { access_token } = await getToken(sim, key);
    const s = await open(access_token);
    const ack = await s.subscribe([30011, 30031]);
    expect(ack.errcode).toBe(10003);
    expect(typeof ack.errmsg).toBe('string');
    sim.emit(30031, { from: '+15550001', text: 'hi' });
    sim.emit(30011, { call_id: 'c1', from: '+15550001', to: '101', state: 'ringing' });
    const frames = await s.waitFrames(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(frames.slice(1).map((f) => JSON.parse(f).event)).toEqual([30011]);
    expect(s.isClosed()).toBe(false);
  });

  it('lets a later topic_list replace the earlier one, and an empty list unsubscribe', async () => {
    await start();
    const { access_token } = await getToken(sim);
    const s = await open(access_token);
    await s.subscribe([30011]);
    await s.subscribe([30009]);
    sim.emit(30011, { call_id: 'x', from: '1', to: '101', state: 'ringing' });
    sim.emit(30009, { n: 1 });
    await s.waitFrames(3);
    await s.subscribe([]);
    sim.emit(30009, { n: 2 });
    s.ws.send('heartbeat');
    const frames = await s.waitFrames(5);
    expect(frames.slice(2)).toEqual([
      expect.stringContaining('"n":1'),
      '{"errcode":0,"errmsg":"SUCCESS"}',
      'heartbeat response',
    ]);
  });

  it('answers 40000 to a malformed subscribe frame and keeps the socket open', async () => {
    await start();
    const { access_token } = await getToken(sim);
    const s = await open(access_token);
    s.ws.send('{"topic_list":"30011"}');
    const frames = await s.waitFrames(1);
    expect(JSON.parse(frames[0] as string).errcode).toBe(40000);
    expect(await s.subscribe([30011])).toMatchObject({ errcode: 0 });
  });

  it('answers heartbeat with heartbeat response', async () => {
    await start();
    const { access_token } = await getToken(sim);
    const s = await open(access_token);
    s.ws.send('heartbeat');
    expect(await s.waitFrames(1)).toEqual(['heartbeat response']);
  });

  it('closes with 4000 a socket whose client stays silent for idleTimeoutMs, not one that heartbeats', async () => {
    await start({ idleTimeoutMs: 300 });
    const { access_token } = await getToken(sim);
    const silent = await open(access_token);
    const chatty = await open(access_token);
    const beat = setInterval(() => chatty.ws.send('heartbeat'), 100);
    try {
      const closed = await silent.closed;
      expect(closed.code).toBe(4000);
      await new Promise((r) => setTimeout(r, 300));
      expect(chatty.isClosed()).toBe(false);
      await waitFor(() => sim.stats().wsOpen === 1, 'wsOpen 1', { timeoutMs: 2000 });
    } finally {
      clearInterval(beat);
    }
    // The timer measures silence, not age: once the chatty client stops, it is closed the same way.
    expect((await chatty.closed).code).toBe(4000);
  });

  it('sends TOKEN EXPIRED and closes 4002 when the token that opened the socket expires (sim clock)', async () => {
    const clock = new FakeClock();
    await start({ clock });
    const first = await getToken(sim);
    await clock.advance(600_000);
    const second = await getToken(sim);
    const a = await open(first.access_token);
    const b = await open(second.access_token);
    await a.subscribe([30011]);
    await b.subscribe([30011]);
    await clock.advance(1_199_999);
    expect(a.isClosed()).toBe(false);
    await clock.advance(1);
    const closed = await a.closed;
    expect(closed.code).toBe(4002);
    expect(a.frames.at(-1)).toBe('{"errcode":10002,"errmsg":"TOKEN EXPIRED"}');
    expect(b.isClosed()).toBe(false);
  });

  it('expireAllTokens closes every socket with TOKEN EXPIRED + 4002 and makes tokens 10002', async () => {
    await start();
    const pair = await getToken(sim);
    const s = await open(pair.access_token);
    sim.expireAllTokens();
    expect((await s.closed).code).toBe(4002);
    expect(s.frames).toEqual(['{"errcode":10002,"errmsg":"TOKEN EXPIRED"}']);
    expect((await rejectionOf(openSocket(sim, pair.access_token))).body.errcode).toBe(10002);
  });

  it('delivers an event only to sockets of its tenant, and never replays to later sockets', async () => {
    await start();
    const other = sim.createApiKey({ name: 'other tenant', tenant: 'globex' });
    const mine = await open((await getToken(sim)).access_token);
    const theirs = await open((await getToken(sim, other)).access_token);
    await mine.subscribe([30011]);
    await theirs.subscribe([30011]);
    sim.ring({ from: '+441234', to: '101' });
    sim.emit(30011, { call_id: 'g1', from: '1', to: '5', state: 'ringing' }, { tenant: 'globex' });
    await mine.waitFrames(2);
    await theirs.waitFrames(2);
    expect(JSON.parse(mine.frames[1] as string).tenant).toBe('acme');
    expect(JSON.parse(theirs.frames[1] as string).tenant).toBe('globex');

    const late = await open((await getToken(sim)).access_token);
    await late.subscribe([30011]);
    sim.emit(30011, { call_id: 'c9', from: '1', to: '101', state: 'ringing' });
    await late.waitFrames(2);
    expect(late.frames.slice(1).map((f) => JSON.parse(f).data.call_id)).toEqual(['c9']);
  });
});
