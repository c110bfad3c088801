import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src-sim/index.ts';
import type { Simulator } from '../../src-sim/index.ts';
import { getToken, openSocket, rejectionOf } from './helpers.ts';
import { waitFor } from '../../rigs/wait.ts';
import type { TestSocket } from './helpers.ts';

describe('simulator fault injection', () => {
  let sim: Simulator;
  const sockets: TestSocket[] = [];
  const subscribed = async () => {
    const s = await openSocket(sim, (await getToken(sim)).access_token);
    sockets.push(s);
    await s.subscribe([30011]);
    return s;
  };
  const eventIds = (s: TestSocket) =>
    s.frames.slice(1).map((f) => JSON.parse(f).event_id as string);
  const ring = (n: number) =>
    sim.emit(30011, { call_id: `c${n}`, from: '+15550000', to: '101', state: 'ringing' }).event_id;

  beforeEach(async () => {
    sim = await startSimulator({ idleTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close();
    await sim.close();
  });

  it('closeAllSockets closes with 1001 by default, or the given code', async () => {
    const a = await subscribed();
    sim.closeAllSockets();
    expect((await a.closed).code).toBe(1001);
    const b = await subscribed();
    sim.closeAllSockets(1012);
    expect((await b.closed).code).toBe(1012);
  });

  it('stallSockets keeps TCP open but answers nothing; new sockets work', async () => {
    const a = await subscribed();
    sim.stallSockets();
    a.ws.send('heartbeat');
    ring(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(a.frames).toHaveLength(1);
    expect(a.isClosed()).toBe(false);
    const b = await subscribed();
    ring(2);
    await b.waitFrames(2);
    expect(a.frames).toHaveLength(1);
  });

  it('duplicateNext(n) sends each of the next n events twice', async () => {
    const s = await subscribed();
    sim.duplicateNext(2);
    const ids = [ring(1), ring(2), ring(3)];
    await s.waitFrames(6);
    expect(eventIds(s)).toEqual([ids[0], ids[0], ids[1], ids[1], ids[2]]);
    expect(sim.stats().eventsSent).toBe(5);
  });

  it('reorderNext(n) holds the next n events and sends them in reverse order', async () => {
    const s = await subscribed();
    sim.reorderNext(3);
    const ids = [ring(1), ring(2)];
    await new Promise((r) => setTimeout(r, 50));
    expect(s.frames).toHaveLength(1);
    ids.push(ring(3), ring(4));
    await s.waitFrames(5);
    expect(eventIds(s)).toEqual([ids[2], ids[1], ids[0], ids[3]]);
  });

  it('failHttp with target handshake refuses the next upgrades with the status and Retry-After', async () => {
    const { access_token } = await getToken(sim);
    sim.failHttp({ status: 503, count: 1, retryAfterSec: 3, target: 'handshake' });
    const refused = await rejectionOf(openSocket(sim, access_token));
    expect(refused).toEqual({ status: 503, body: { errcode: 50300, errmsg: expect.any(String) } });
    const s = await openSocket(sim, access_token);
    sockets.push(s);
    expect(await s.subscribe([30011])).toMatchObject({ errcode: 0 });
  });

  it('revokeKey closes that key’s open sockets (10001, close 4001) and leaves other keys alone', async () => {
    const other = sim.createApiKey({ name: 'second app' });
    const mine = await subscribed();
    const theirs = await openSocket(sim, (await getToken(sim, other)).access_token);
    sockets.push(theirs);
    sim.revokeKey(sim.apiKey.key);
    expect((await mine.closed).code).toBe(4001);
    expect(JSON.parse(mine.frames.at(-1) as string).errcode).toBe(10001);
    expect(theirs.isClosed()).toBe(false);
  });

  it('emitRaw sends exact text to subscribed sockets (by event code, or to all when none given)', async () => {
    const s = await subscribed();
    const other = await openSocket(sim, (await getToken(sim)).access_token);
    sockets.push(other);
    await other.subscribe([30009]);
    sim.emitRaw('{"event":30011,"data":null', { event: 30011 });
    sim.emitRaw('not json at all');
    await s.waitFrames(3);
    await other.waitFrames(2);
    expect(s.frames.slice(1)).toEqual(['{"event":30011,"data":null', 'not json at all']);
    expect(other.frames.slice(1)).toEqual(['not json at all']);
    expect(sim.stats().eventsSent).toBe(0);
  });

  it('terminates a socket that stops reading once too many bytes are queued for it', async () => {
    await sim.close();
    sim = await startSimulator({ maxBufferedBytes: 256 * 1024 });
    const slow = await subscribed();
    const healthy = await subscribed();
    // The client stops reading: kernel buffers fill first, then the simulator's queue grows.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 600 && sim.stats().wsOpen === 2; i++) {
      sim.emit(30011, { call_id: `c${i}`, from: '+1555', to: '101', state: 'ringing', pad: big });
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5));
    }
    await waitFor(() => sim.stats().wsOpen === 1, 'the slow socket dropped', { timeoutMs: 3000 });
    expect(healthy.isClosed()).toBe(false);
  });

  it('rejects bad fault arguments', () => {
    expect(() => sim.failHttp({ status: 404 as 500, count: 1 })).toThrow(RangeError);
    expect(() => sim.revokeKey('sk_unknown')).toThrow(RangeError);
  });
});
