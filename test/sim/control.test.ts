import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src-sim/index.ts';
import type { Simulator } from '../../src-sim/index.ts';
import { call, getToken, listExtensions, openSocket, postJson, rejectionOf } from './helpers.ts';
import { waitFor } from '../../rigs/wait.ts';
import type { TestSocket } from './helpers.ts';

describe('simulator control surface /_sim/', () => {
  let sim: Simulator;
  let socket: TestSocket | undefined;
  const control = (path: string, body: unknown = {}) => postJson(sim, `/_sim/${path}`, body);

  beforeEach(async () => {
    sim = await startSimulator({ extensions: 30 });
  });
  afterEach(async () => {
    socket?.close();
    socket = undefined;
    await sim.close();
  });

  const subscribed = async () => {
    socket = await openSocket(sim, (await getToken(sim)).access_token);
    await socket.subscribe([30011, 30009]);
    return socket;
  };

  it('reports info, extensions and stats', async () => {
    const info = await call(sim, '/_sim/info');
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      errcode: 0,
      baseUrl: sim.baseUrl,
      tenant: 'acme',
      apiKey: sim.apiKey,
      extensions: 30,
    });
    const ext = await call(sim, '/_sim/extensions');
    expect(ext.body.data).toEqual(sim.extensions);
    await getToken(sim);
    const stats = await call(sim, '/_sim/stats');
    expect(stats.body).toMatchObject({ errcode: 0, stats: { getToken: 1 } });
  });

  it('rings, changes call state and emits', async () => {
    const s = await subscribed();
    const ring = await control('ring', { from: '+15557654321', to: ['101', '102'] });
    const callId = ring.body.call_id as string;
    expect(ring.body).toMatchObject({ errcode: 0, call_id: expect.any(String) });
    expect((await control('state', { callId, state: 'answered', to: '101' })).body.errcode).toBe(0);
    const emitted = await control('emit', {
      event: 30009,
      data: { extension: '101', presence: 'busy' },
      eventId: 'evt_custom',
      timestamp: 1234,
    });
    expect(emitted.body.envelope).toEqual({
      event: 30009,
      timestamp: 1234,
      tenant: 'acme',
      data: { extension: '101', presence: 'busy' },
      event_id: 'evt_custom',
    });
    const frames = await s.waitFrames(5);
    expect(
      frames
        .slice(1, 4)
        .map((f) => [JSON.parse(f).data.call_id, JSON.parse(f).data.to, JSON.parse(f).data.state]),
    ).toEqual([
      [callId, '101', 'ringing'],
      [callId, '102', 'ringing'],
      [callId, '101', 'answered'],
    ]);
    await control('emit-raw', { text: '{"broken":', event: 30011 });
    await s.waitFrames(6);
    expect(frames[5]).toBe('{"broken":');
    expect(frames[4]).toBe(
      '{"event":30009,"timestamp":1234,"tenant":"acme","data":{"extension":"101","presence":"busy"},"event_id":"evt_custom"}',
    );
  });

  it('transfers a call: the first extension ended, then the new one ringing, with the same caller', async () => {
    const s = await subscribed();
    const callId = (await control('ring', { from: '+15557654321', to: '101' })).body
      .call_id as string;
    await control('state', { callId, state: 'answered', to: '101' });
    expect((await control('transfer', { callId, from: '101', to: '104' })).body.errcode).toBe(0);
    const frames = await s.waitFrames(5);
    expect(frames.slice(1, 5).map((f) => JSON.parse(f).data)).toEqual([
      { call_id: callId, from: '+15557654321', to: '101', state: 'ringing' },
      { call_id: callId, from: '+15557654321', to: '101', state: 'answered' },
      { call_id: callId, from: '+15557654321', to: '101', state: 'ended' },
      { call_id: callId, from: '+15557654321', to: '104', state: 'ringing' },
    ]);
    // From an extension not in the call, to the same one, or in an unknown call: 40000.
    for (const body of [
      { callId, from: '102', to: '105' },
      { callId, from: '104', to: '104' },
      { callId: 'nope', from: '104', to: '105' },
      { callId, from: '104' },
    ])
      expect((await control('transfer', body)).body.errcode, JSON.stringify(body)).toBe(40000);
  });

  it('validates bodies and routes: 40000, 40400, 40500', async () => {
    expect((await control('ring', { from: 5, to: '101' })).body.errcode).toBe(40000);
    expect((await control('state', { callId: 'nope', state: 'ended' })).status).toBe(400);
    expect((await control('emit', { event: 30011, data: [] })).body.errcode).toBe(40000);
    expect((await control('emit', '{bad')).status).toBe(400);
    expect((await control('no-such-route')).status).toBe(404);
    expect((await call(sim, '/_sim/ring')).status).toBe(405);
  });

  it('drives faults: fail-http, allowlist, revoke, expire-tokens, duplicate, reorder, close, stall', async () => {
    const { access_token } = await getToken(sim);
    await control('faults/fail-http', { status: 429, count: 1, retryAfterSec: 2 });
    const limited = await listExtensions(sim, access_token);
    expect([limited.status, limited.headers.get('retry-after'), limited.body.errcode]).toEqual([
      429,
      '2',
      42900,
    ]);

    await control('faults/allowlist', { key: sim.apiKey.key, ips: ['198.51.100.1'] });
    expect((await listExtensions(sim, access_token)).body.errcode).toBe(10004);
    await control('faults/allowlist', { key: sim.apiKey.key, ips: [] });

    let s = await subscribed();
    await control('faults/duplicate', { n: 1 });
    await control('ring', { from: '+1555', to: '101' });
    await s.waitFrames(3);
    expect(s.frames[1]).toBe(s.frames[2]);

    await control('faults/reorder', { n: 2 });
    await control('emit', { event: 30009, data: { n: 1 } });
    await control('emit', { event: 30009, data: { n: 2 } });
    await s.waitFrames(5);
    expect(s.frames.slice(3).map((f) => JSON.parse(f).data.n)).toEqual([2, 1]);

    await control('faults/close', { code: 1012 });
    expect((await s.closed).code).toBe(1012);

    s = await subscribed();
    await control('faults/stall');
    s.ws.send('heartbeat');
    await new Promise((r) => setTimeout(r, 100));
    expect(s.frames).toHaveLength(1);
    s.close();

    s = await subscribed();
    await control('faults/expire-tokens');
    expect((await s.closed).code).toBe(4002);

    const fresh = await getToken(sim);
    await control('faults/revoke', { key: sim.apiKey.key });
    expect((await rejectionOf(openSocket(sim, fresh.access_token))).body.errcode).toBe(10001);
  });

  it('creates keys with scopes', async () => {
    const created = await control('keys', { name: 'Reporting', scopes: ['extension:read'] });
    const key = created.body.key as { key: string; secret: string; scopes: string[] };
    expect(created.body).toMatchObject({
      errcode: 0,
      key: { name: 'Reporting', scopes: ['extension:read'], allowlist: [] },
    });
    const token = await postJson(sim, '/openapi/v1.0/get_token', {
      username: key.key,
      password: key.secret,
    });
    expect(token.status).toBe(200);
  });

  it('adds, lists and removes webhooks; starts and stops traffic', async () => {
    const received: string[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const added = await control('webhooks', { url, secret: 'abc123', events: [30011] });
      const id = added.body.id as string;
      expect((await call(sim, '/_sim/webhooks')).body.data).toEqual([
        { id, tenant: sim.tenant, url, events: [30011] },
      ]);
      await control('traffic/start', { ratePerSec: 100, excludeExtensions: ['101'] });
      await waitFor(() => received.length >= 5, 'webhook deliveries from traffic', {
        timeoutMs: 3000,
      });
      await control('traffic/stop');
      const del = await call(sim, `/_sim/webhooks/${id}`, { method: 'DELETE' });
      expect(del.body.errcode).toBe(0);
      expect((await call(sim, '/_sim/webhooks')).body.data).toEqual([]);
      expect((await call(sim, `/_sim/webhooks/${id}`, { method: 'DELETE' })).status).toBe(400);
      expect((await control('traffic/start', { ratePerSec: -1 })).body.errcode).toBe(40000);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });

  it('is absent when control is off', async () => {
    const off = await startSimulator({ control: false });
    try {
      const answer = await call(off, '/_sim/info');
      expect([answer.status, answer.body.errcode]).toEqual([404, 40400]);
    } finally {
      await off.close();
    }
  });
});
