/**
 * Organisation mode's call requests (issue 38 item 5): `POST /v1/calls/<tenant>` on a real relay
 * on 127.0.0.1, its users enrolled as desktops are, and a fake Yeastar P-Series on the far side
 * of a wire, answering as the developer guide's call/dial examples do
 * (`POST /openapi/v1.0/call/dial?access_token=...` with `{caller, callee}`, answered
 * `{errcode: 0, errmsg: "SUCCESS", call_id}`; errcode 10005 "ACCESS DENIED" for an application
 * without the permission).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { addUser, enrol, orgConfig, startOrgRelay } from '../../rigs/relay/users-support.ts';
import type { PbxCallAnswer, RelayCallApi } from '../../src-relay/calls/call-route.ts';
import { RelayCallControl } from '../../src-main/core/org/relay-call-control.ts';
import { callRefusal } from '../../src-shared/api/call-api.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { english, render, type Words } from '../../src-shared/i18n/phrase.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('call-route-');

/** The far side: a P-Series answering call/dial, call/hangup, call/transfer as its guide shows. */
async function fakeYeastar(answerErrcode = 0) {
  const requests: { path: string; body: Record<string, unknown> }[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      requests.push({ path, body: JSON.parse(text || '{}') as Record<string, unknown> });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify(
          answerErrcode === 0
            ? {
                errcode: 0,
                errmsg: 'SUCCESS',
                ...(path.endsWith('/dial') && { call_id: '1700000000.77' }),
              }
            : { errcode: answerErrcode, errmsg: 'ACCESS DENIED' },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi/v1.0/`;
  /**
   * A stand-in for dial-core's call API client (not yet on its branch): the request shapes of the
   * guide's examples, nothing more.
   */
  const post = async (endpoint: string, body: unknown): Promise<PbxCallAnswer> => {
    const res = await fetch(`${base}${endpoint}?access_token=tok`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'OpenAPI' },
      body: JSON.stringify(body),
    });
    const a = (await res.json()) as { errcode: number; errmsg: string; call_id?: string };
    return a.errcode === 0
      ? { ok: true, ...(a.call_id ? { callId: a.call_id } : {}) }
      : { ok: false, errcode: a.errcode, errmsg: a.errmsg };
  };
  const api: RelayCallApi = {
    dial: (from, to) => post('call/dial', { caller: from, callee: to }),
    transfer: (from, callId, to, mode) =>
      post('call/transfer', { channel_id: callId, number: to, type: mode, extension: from }),
    hangup: (from, callId) => post('call/hangup', { channel_id: callId, extension: from }),
    attended: (from, callId, operate) =>
      post('call/transfer', {
        type: 'attended',
        channel_id: callId,
        attended_operate: operate,
        extension: from,
      }),
  };
  return { requests, api, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function setUp(errcode = 0, callRate = { burst: 5, perMinute: 20 }) {
  const pbx = await fakeYeastar(errcode);
  closers.push(pbx.close);
  const logger = memoryLogger();
  const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')), undefined, {
    logger,
    callApi: (tenant) => (tenant === 'acme' ? pbx.api : undefined),
    callRate,
  });
  closers.push(org.close);
  const aliceCode = await addUser(org.users, 'alice', ['101']);
  await addUser(org.users, 'bob', ['102']);
  const alice = (await enrol(org.relay.url, aliceCode)).body.credential;
  const call = async (body: unknown, credential: string | null = alice) => {
    const res = await fetch(`${org.relay.url}/v1/calls/acme`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(credential ? { Authorization: `Bearer ${credential}` } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const audit = () =>
    logger.records.filter((r) => (r as unknown as { component?: string }).component === 'audit');
  return { pbx, org, alice, call, logger, audit };
}

describe('the relay call endpoint (organisation mode)', () => {
  it("dials from the signed-in user's own extension, and the PBX is asked to call from it", async () => {
    const { pbx, call } = await setUp();
    const r = await call({ action: 'dial', to: '+442071234567' });
    expect(r).toEqual({ status: 200, body: { ok: true, callId: '1700000000.77' } });
    expect(pbx.requests).toEqual([
      { path: '/openapi/v1.0/call/dial', body: { caller: '101', callee: '+442071234567' } },
    ]);
  });

  it("a request naming a colleague's extension cannot make the relay dial from it", async () => {
    const { pbx, call } = await setUp();
    const r = await call({ action: 'dial', to: '+442071234567', from: '102' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ ok: false, refusal: 'not-own-extension' });
    const extra = await call({ action: 'dial', to: '555', caller: '102', extension: '102' });
    expect(extra.status).toBe(200);
    expect(pbx.requests.map((q) => q.body.caller)).toEqual(['101']);
  });

  it('refuses without a session, with an unknown one and with a revoked one, before any PBX request', async () => {
    const { pbx, org, call } = await setUp();
    const none = await call({ action: 'dial', to: '555' }, null);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ refusal: 'sign-in-required', errcode: 46001 });
    const unknown = await call({ action: 'dial', to: '555' }, 'sprd_notanenrolleddevice0000000');
    expect(unknown.status).toBe(401);
    // Sign in again helps: RELAY_ERRCODE.signInRequired.
    expect(unknown.body).toMatchObject({ refusal: 'sign-in-required', errcode: 46001 });
    await org.users.revoke('acme', 'alice', Date.now());
    const revoked = await call({ action: 'dial', to: '555' });
    expect(revoked.status).toBe(401);
    // A revoked user's device credentials are deleted with the user (user-state.ts revoke), so the
    // relay cannot tell them from unknown ones: signInRequired, as the stream's handshake says
    // (an OpenID sign-in of a revoked user gets RELAY_ERRCODE.revoked 46002 from oidc.ts).
    expect(revoked.body).toMatchObject({ refusal: 'sign-in-required', errcode: 46001 });
    expect(pbx.requests).toEqual([]);
  });

  it('limits each user: past the burst, 429 rate-limited and no PBX request', async () => {
    const { pbx, call } = await setUp(0, { burst: 2, perMinute: 1 });
    expect((await call({ action: 'dial', to: '555' })).status).toBe(200);
    expect((await call({ action: 'hangup', callId: '1700000000.77' })).status).toBe(200);
    const third = await call({ action: 'dial', to: '555' });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ refusal: 'rate-limited' });
    expect(pbx.requests).toHaveLength(2);
  });

  it('writes one audit line per action: user, extension, masked number, outcome; no credential', async () => {
    const { alice, call, audit } = await setUp();
    await call({ action: 'dial', to: '+442071234567' });
    await call({ action: 'dial', to: '+442071234567', from: '102' });
    const lines = audit();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      user: 'alice',
      action: 'dial',
      extension: '101',
      to: '********67',
      outcome: 'ok',
    });
    expect(lines[1]).toMatchObject({
      user: 'alice',
      requested: '102',
      outcome: 'not-own-extension',
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(alice);
    expect(text).not.toContain('2071234567');
    expect(text).not.toContain('access_token');
  });

  it("an attended transfer's Complete and Cancel: the user's own extension, rate-limited, audited", async () => {
    const { pbx, call, audit } = await setUp(0, { burst: 3, perMinute: 1 });
    const callId = '1700000000.77';
    expect(await call({ action: 'complete-transfer', callId })).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await call({ action: 'cancel-transfer', callId, from: '102' })).toMatchObject({
      status: 403,
      body: { ok: false, refusal: 'not-own-extension' },
    });
    expect((await call({ action: 'cancel-transfer', callId })).status).toBe(200);
    expect(await call({ action: 'complete-transfer', callId })).toMatchObject({
      status: 429,
      body: { refusal: 'rate-limited' },
    });
    expect(pbx.requests.map((q) => q.body)).toEqual([
      { type: 'attended', channel_id: callId, attended_operate: 'complete', extension: '101' },
      { type: 'attended', channel_id: callId, attended_operate: 'abort', extension: '101' },
    ]);
    expect(audit().map((l) => [l.action, l.outcome])).toEqual([
      ['complete-transfer', 'ok'],
      ['cancel-transfer', 'not-own-extension'],
      ['cancel-transfer', 'ok'],
      ['complete-transfer', 'rate-limited'],
    ]);
    // A call id is required and shaped like one.
    expect((await call({ action: 'complete-transfer' })).status).toBe(400);
  });

  it('says errcode 10005 as the missing permission', async () => {
    const { call, audit } = await setUp(10005);
    const r = await call({ action: 'dial', to: '555' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ ok: false, refusal: 'permission' });
    expect(audit()[0]).toMatchObject({ outcome: 'permission', errcode: 10005 });
  });

  it('validates bodies at the boundary: not JSON, unknown action, an oversized body', async () => {
    const { pbx, call } = await setUp();
    expect((await call('{not json')).status).toBe(400);
    expect((await call({ action: 'conference', to: '555' })).status).toBe(400);
    expect((await call({ action: 'dial', to: 'x'.repeat(40) })).status).toBe(400);
    expect((await call({ action: 'dial', to: '555', pad: 'x'.repeat(5000) })).status).toBe(413);
    expect(pbx.requests).toEqual([]);
  });

  it("the desktop's RelayCallControl dials through the relay and reads its refusals as CallControlRefusal ids", async () => {
    const { alice, org, pbx } = await setUp(0, { burst: 1, perMinute: 1 });
    let invalidated = 0;
    const control = (credential: string) =>
      new RelayCallControl(
        { relayUrl: org.relay.url, tenant: 'acme' },
        {
          fetch,
          logger: silentLogger,
          tokens: {
            getToken: () => Promise.resolve({ value: credential, expiresAt: Date.now() + 60_000 }),
            invalidate: () => (invalidated += 1),
          },
        },
      );
    expect(await control(alice).dial('+442071234567')).toEqual({
      ok: true,
      callId: '1700000000.77',
    });
    expect(pbx.requests.map((q) => q.body)).toEqual([{ caller: '101', callee: '+442071234567' }]);
    expect(await control(alice).hangup('1700000000.77')).toMatchObject({
      ok: false,
      refusal: 'rate-limited',
    });
    expect(await control(alice).completeTransfer('1700000000.77')).toMatchObject({
      ok: false,
      refusal: 'rate-limited',
    });
    expect(await control('sprd_notanenrolleddevice0000000').dial('555')).toMatchObject({
      ok: false,
    });
    expect(invalidated).toBe(1);
    expect(await control(alice).answer()).toMatchObject({ ok: false, refusal: 'not-offered' });
    // The same words as the phone system's own CallControl says its refusals in.
    expect(await control(alice).decline()).toEqual(callRefusal('not-offered'));
  });

  it("the desktop tells the relay's 401 revoked (ask the administrator) from expired (sign in again), in every language", async () => {
    // The far side as docs/relay-protocol.md publishes the call route's 401 body.
    const relay401 = (errcode: number) => () =>
      Promise.resolve(
        new Response(
          JSON.stringify({ ok: false, refusal: 'sign-in-required', message: 'x', errcode }),
          { status: 401, headers: { 'Content-Type': 'application/json' } },
        ),
      );
    let invalidated = 0;
    const control = (errcode: number) =>
      new RelayCallControl(
        { relayUrl: 'https://relay.example', tenant: 'acme' },
        {
          fetch: relay401(errcode),
          logger: silentLogger,
          tokens: {
            getToken: () => Promise.resolve({ value: 'sprd_x', expiresAt: Date.now() + 60_000 }),
            invalidate: () => (invalidated += 1),
          },
        },
      );
    const revoked = await control(46002).dial('555');
    const expired = await control(46001).dial('555');
    expect(revoked).toMatchObject({ ok: false, refusal: 'revoked' });
    expect(expired).toMatchObject({ ok: false, refusal: 'sign-in-expired' });
    expect(invalidated).toBe(2);
    if (revoked.ok || expired.ok) throw new Error('unreachable');
    expect(english(revoked.words)).toMatch(/administrator.*will not help/);
    expect(english(expired.words)).toMatch(/expired: sign in again/);
    for (const lang of ['en', 'de', 'fr', 'es', 'ar'] as const) {
      const t = createTranslator(lang);
      const a = render(revoked.words, t);
      const b = render(expired.words, t);
      expect(a).not.toContain('status.call.refused');
      expect(b).not.toContain('status.call.refused');
      expect(a).not.toBe(b);
    }
  });

  it("a relay that answers 504 (the lease holder stopped mid-request) or not before the desktop's time-out: 'uncertain', never 'unreachable' (the call may have been placed)", async () => {
    let answer504 = true;
    const slow = http.createServer((req, res) => {
      req.resume();
      if (answer504) {
        res.writeHead(504, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ ok: false, refusal: 'uncertain', message: 'may or may not' }));
      } // otherwise never answers: the desktop's time-out ends it
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const port = (slow.address() as AddressInfo).port;
    try {
      const control = new RelayCallControl(
        { relayUrl: `http://127.0.0.1:${port}`, tenant: 'acme' },
        {
          fetch,
          logger: silentLogger,
          timeoutMs: 300,
          tokens: {
            getToken: () => Promise.resolve({ value: 'sprd_x', expiresAt: Date.now() + 60_000 }),
            invalidate: () => {},
          },
        },
      );
      const held = await control.dial('+442071234567');
      expect(held).toMatchObject({ ok: false, refusal: 'uncertain' });
      expect(english((held as { words: Words }).words)).toMatch(/Check your phone/);
      answer504 = false;
      expect(await control.dial('+442071234567')).toMatchObject({
        ok: false,
        refusal: 'uncertain',
      });
    } finally {
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });
});
