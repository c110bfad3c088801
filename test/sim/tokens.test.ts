import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { startSimulator } from '../../src-sim/index.ts';
import type { Simulator } from '../../src-sim/index.ts';
import { call, getToken, listExtensions, postJson } from './helpers.ts';

describe('simulator token endpoints and extension list', () => {
  let clock: FakeClock;
  let sim: Simulator;

  beforeEach(async () => {
    clock = new FakeClock();
    sim = await startSimulator({ clock, extensions: 250 });
  });
  afterEach(() => sim.close());

  it('exchanges key and secret for a token pair with the spec lifetimes', async () => {
    const answer = await postJson(sim, '/openapi/v1.0/get_token', {
      username: sim.apiKey.key,
      password: sim.apiKey.secret,
    });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(
      [
        'access_token',
        'access_token_expire_time',
        'errcode',
        'errmsg',
        'refresh_token',
        'refresh_token_expire_time',
      ].sort(),
    );
    expect(answer.body).toMatchObject({
      errcode: 0,
      errmsg: 'SUCCESS',
      access_token_expire_time: 1800,
      refresh_token_expire_time: 86400,
    });
    expect(answer.body.access_token).toMatch(/^\S{20,}$/);
    expect(answer.body.access_token).not.toBe(answer.body.refresh_token);
    expect(sim.stats().getToken).toBe(1);
  });

  it('rejects a wrong secret, an unknown key and a revoked key with 401 errcode 10001', async () => {
    const wrong = await postJson(sim, '/openapi/v1.0/get_token', {
      username: sim.apiKey.key,
      password: 'nope',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ errcode: 10001, errmsg: expect.any(String) });
    const unknown = await postJson(sim, '/openapi/v1.0/get_token', {
      username: 'sk_nobody',
      password: sim.apiKey.secret,
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.errcode).toBe(10001);

    const pair = await getToken(sim);
    sim.revokeKey(sim.apiKey.key);
    const revoked = await postJson(sim, '/openapi/v1.0/get_token', {
      username: sim.apiKey.key,
      password: sim.apiKey.secret,
    });
    expect([revoked.status, revoked.body.errcode]).toEqual([401, 10001]);
    const withOldToken = await listExtensions(sim, pair.access_token);
    expect([withOldToken.status, withOldToken.body.errcode]).toEqual([401, 10001]);
    const refresh = await postJson(sim, '/openapi/v1.0/refresh_token', {
      refresh_token: pair.refresh_token,
    });
    expect([refresh.status, refresh.body.errcode]).toEqual([401, 10001]);
  });

  it('answers a malformed request with 400 errcode 40000', async () => {
    for (const body of [
      '{not json',
      '[1,2]',
      JSON.stringify({ username: 42, password: 'x' }),
      JSON.stringify({}),
    ]) {
      const answer = await postJson(sim, '/openapi/v1.0/get_token', body);
      expect(answer.status, body).toBe(400);
      expect(answer.body).toEqual({ errcode: 40000, errmsg: expect.any(String) });
    }
    const noRefresh = await postJson(sim, '/openapi/v1.0/refresh_token', {});
    expect([noRefresh.status, noRefresh.body.errcode]).toEqual([400, 40000]);
    const notFound = await call(sim, '/openapi/v1.0/no/such/thing');
    expect([notFound.status, notFound.body.errcode]).toEqual([404, 40400]);
    const wrongMethod = await call(sim, '/openapi/v1.0/get_token');
    expect([wrongMethod.status, wrongMethod.body.errcode]).toEqual([405, 40500]);
  });

  it('expires the access token after 1800 s of sim time with 401 errcode 10002', async () => {
    const pair = await getToken(sim);
    await clock.advance(1_799_999);
    expect((await listExtensions(sim, pair.access_token)).status).toBe(200);
    await clock.advance(1);
    const expired = await listExtensions(sim, pair.access_token);
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ errcode: 10002, errmsg: 'TOKEN EXPIRED' });
    expect(sim.stats().tokenExpiredRejections).toBe(1);
  });

  it('judges expiry on the wall clock, so a laptop-style sleep expires tokens too', async () => {
    const pair = await getToken(sim);
    clock.sleep(31 * 60_000);
    expect((await listExtensions(sim, pair.access_token)).body.errcode).toBe(10002);
  });

  it('answers a missing or unknown bearer token with 401 errcode 10002', async () => {
    const none = await call(sim, '/openapi/v1.0/extension/list');
    expect([none.status, none.body.errcode]).toEqual([401, 10002]);
    const unknown = await listExtensions(sim, 'at_made_up');
    expect([unknown.status, unknown.body.errcode]).toEqual([401, 10002]);
  });

  it('refresh issues a new pair, spends the old refresh token and leaves the old access token valid', async () => {
    const first = await getToken(sim);
    await clock.advance(1_000_000);
    const answer = await postJson(sim, '/openapi/v1.0/refresh_token', {
      refresh_token: first.refresh_token,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      errcode: 0,
      errmsg: 'SUCCESS',
      access_token_expire_time: 1800,
      refresh_token_expire_time: 86400,
    });
    const second = answer.body as unknown as typeof first;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(sim.stats().refreshToken).toBe(1);

    const again = await postJson(sim, '/openapi/v1.0/refresh_token', {
      refresh_token: first.refresh_token,
    });
    expect([again.status, again.body.errcode]).toEqual([401, 10002]);

    // Old access token: valid until its own expiry (1800 s after issue), the new one lives on.
    await clock.advance(799_999);
    expect((await listExtensions(sim, first.access_token)).status).toBe(200);
    await clock.advance(1);
    expect((await listExtensions(sim, first.access_token)).body.errcode).toBe(10002);
    expect((await listExtensions(sim, second.access_token)).status).toBe(200);
  });

  it('refuses a refresh token after its 86400 s lifetime with 10002', async () => {
    const pair = await getToken(sim);
    await clock.advance(86_400_000);
    const answer = await postJson(sim, '/openapi/v1.0/refresh_token', {
      refresh_token: pair.refresh_token,
    });
    expect([answer.status, answer.body.errcode]).toEqual([401, 10002]);
  });

  it('needs no bearer header on refresh_token and ignores a stale one', async () => {
    const pair = await getToken(sim);
    await clock.advance(1_900_000);
    const answer = await postJson(
      sim,
      '/openapi/v1.0/refresh_token',
      { refresh_token: pair.refresh_token },
      { Authorization: `Bearer ${pair.access_token}` },
    );
    expect([answer.status, answer.body.errcode]).toEqual([200, 0]);
  });

  it('answers 403 errcode 10003 when the key lacks extension:read', async () => {
    const key = sim.createApiKey({ name: 'events only', scopes: ['event:30011'] });
    const pair = await getToken(sim, key);
    const answer = await listExtensions(sim, pair.access_token);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ errcode: 10003, errmsg: expect.any(String) });
  });

  it('answers 403 errcode 10004 for a caller IP outside the allowlist, on every endpoint', async () => {
    const pair = await getToken(sim);
    sim.setAllowlist(sim.apiKey.key, ['10.1.2.3', '192.168.0.0/16']);
    const token = await postJson(sim, '/openapi/v1.0/get_token', {
      username: sim.apiKey.key,
      password: sim.apiKey.secret,
    });
    expect([token.status, token.body.errcode]).toEqual([403, 10004]);
    expect((await listExtensions(sim, pair.access_token)).body.errcode).toBe(10004);
    const refresh = await postJson(sim, '/openapi/v1.0/refresh_token', {
      refresh_token: pair.refresh_token,
    });
    expect([refresh.status, refresh.body.errcode]).toEqual([403, 10004]);

    sim.setAllowlist(sim.apiKey.key, ['127.0.0.0/8']);
    expect((await listExtensions(sim, pair.access_token)).status).toBe(200);
    expect(() => sim.setAllowlist(sim.apiKey.key, ['not-an-ip'])).toThrow(RangeError);
  });

  it('pages the extension list from page 1 with page_size up to 100 and total_number', async () => {
    const { access_token } = await getToken(sim);
    const seen: Array<Record<string, unknown>> = [];
    for (let page = 1; page <= 3; page++) {
      const answer = await listExtensions(sim, access_token, `?page=${page}&page_size=100`);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ errcode: 0, errmsg: 'SUCCESS', total_number: 250 });
      seen.push(...(answer.body.data as Array<Record<string, unknown>>));
    }
    expect(seen).toHaveLength(250);
    expect(seen[0]).toEqual({
      number: '101',
      caller_id_name: expect.stringMatching(/^[A-Z][a-z]+ .+/),
      email_addr: expect.stringMatching(/^[a-z.]+\d*@acme\.example\.com$/),
      presence_status: expect.any(String),
    });
    expect(seen.map((e) => e.number)).toEqual(
      Array.from({ length: 250 }, (_, i) => String(101 + i)),
    );
    expect(new Set(seen.map((e) => e.caller_id_name)).size).toBe(250);
    expect(sim.extensions).toEqual(seen);

    const beyond = await listExtensions(sim, access_token, '?page=4&page_size=100');
    expect(beyond.body).toMatchObject({ errcode: 0, total_number: 250, data: [] });
    const defaults = await listExtensions(sim, access_token);
    expect((defaults.body.data as unknown[]).length).toBe(20);
    for (const bad of ['?page_size=101', '?page=0', '?page=abc', '?page_size=-5']) {
      const answer = await listExtensions(sim, access_token, bad);
      expect([answer.status, answer.body.errcode], bad).toEqual([400, 40000]);
    }
  });

  it('injects 5xx and 429 with Retry-After for the next API calls, then recovers', async () => {
    sim.failHttp({ status: 429, count: 2, retryAfterSec: 7 });
    for (let i = 0; i < 2; i++) {
      const answer = await postJson(sim, '/openapi/v1.0/get_token', {
        username: sim.apiKey.key,
        password: sim.apiKey.secret,
      });
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('7');
      expect(answer.body).toEqual({ errcode: 42900, errmsg: expect.any(String) });
    }
    const pair = await getToken(sim);
    sim.failHttp({ status: 503, count: 1 });
    const down = await listExtensions(sim, pair.access_token);
    expect([down.status, down.body.errcode]).toEqual([503, 50300]);
    expect(down.headers.get('retry-after')).toBeNull();
    for (const status of [500, 502] as const) {
      sim.failHttp({ status, count: 1 });
      const answer = await listExtensions(sim, pair.access_token);
      expect([answer.status, answer.body.errcode]).toEqual([status, status * 100]);
    }
    expect((await listExtensions(sim, pair.access_token)).status).toBe(200);
    expect(sim.stats()).toMatchObject({ getToken: 3, extensionList: 4 });
  });
});
