/**
 * ServiceClient and TokenManager against the simulator over real sockets on 127.0.0.1, both on one
 * FakeClock: expiry, refresh, each errcode the spec names, and the HTTP faults.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { flushMicrotasks } from '../../rigs/fake-clock.ts';
import type { Rig } from '../../rigs/token-scenarios.ts';
import { startRig } from '../../rigs/token-scenarios.ts';
import { rejection } from './reject.ts';
import { directTransport } from '../../rigs/direct-transport.ts';
import { describeError } from '../../src-shared/api/service-errors.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const rigs: Rig[] = [];
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.close()));
});

async function rig(opts: Parameters<typeof startRig>[0] = {}): Promise<Rig> {
  const r = await startRig(opts);
  rigs.push(r);
  return r;
}

/** Lets real socket I/O finish (the fake clock does not move meanwhile). */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise((r) => setTimeout(r, 5));
    await flushMicrotasks();
  }
}

describe('against the simulator', () => {
  it('gets a token and lists every extension over several pages', async () => {
    const r = await rig({ extensions: 150 });
    const token = await r.manager.getToken();
    expect(token.expiresAt - r.clock.now()).toBe(30 * MINUTE);
    const list = await r.client.listExtensions(token.value);
    expect(list).toHaveLength(150);
    expect(list.map((e) => e.number)).toEqual(r.sim.extensions.map((e) => e.number));
    expect(list[0]?.callerIdName).toBe(r.sim.extensions[0]?.caller_id_name);
    expect(r.sim.stats().extensionList).toBe(2);
  });

  it('refreshes five minutes ahead, so the service never sees an expired token', async () => {
    const r = await rig();
    const first = await r.manager.getToken();
    await r.clock.advance(25 * MINUTE);
    await settle();
    expect(r.sim.stats().refreshToken).toBe(1);
    const second = await r.manager.getToken();
    expect(second.value).not.toBe(first.value);
    await r.clock.advance(6 * MINUTE); // the first token is now dead on the service
    expect(await r.listExtensions()).toBe(20);
    expect(r.sim.stats().tokenExpiredRejections).toBe(0);
  });

  it('server-side expiry (10002): refreshes once and retries the call', async () => {
    const r = await rig();
    await r.listExtensions();
    r.sim.expireAllTokens();
    expect(await r.listExtensions()).toBe(20);
    expect(r.seenByFn.get('expired')).toBe(1);
    expect(r.sim.stats()).toMatchObject({
      refreshToken: 1,
      getToken: 1,
      tokenExpiredRejections: 1,
    });
  });

  it('after more than 24 hours asleep, exchanges key and secret again', async () => {
    const r = await rig();
    await r.listExtensions();
    r.clock.sleep(25 * HOUR);
    r.manager.wake();
    expect(await r.listExtensions()).toBe(20);
    expect(r.sim.stats()).toMatchObject({ getToken: 2, tokenExpiredRejections: 0 });
  });

  it('10001 (revoked key) stops every retry and needs attention until the credentials change', async () => {
    const r = await rig();
    await r.listExtensions();
    r.sim.revokeKey(r.sim.apiKey.key);
    const err = await rejection(r.listExtensions());
    expect(err).toMatchObject({ kind: 'credentials', errcode: 10001 });
    expect(r.manager.health()).toMatchObject({ state: 'needs-attention' });
    const before = r.sim.stats();
    await r.clock.advance(24 * HOUR);
    r.manager.wake();
    await rejection(r.manager.getToken());
    await settle();
    const after = r.sim.stats();
    expect(after.getToken + after.refreshToken).toBe(before.getToken + before.refreshToken);
    // the administrator issues a new key; the user enters it
    const fresh = r.sim.createApiKey({ name: 'Screenpop 2' });
    r.setCredentials(fresh);
    r.manager.credentialsChanged();
    expect(await r.listExtensions()).toBe(20);
    expect(r.manager.health().state).toBe('ok');
  });

  it('10001 on get_token with a wrong secret makes exactly one login attempt', async () => {
    const r = await rig();
    r.setCredentials({ key: r.sim.apiKey.key, secret: 'ss_not-the-secret' });
    const err = await rejection(r.manager.getToken());
    expect(err.errcode).toBe(10001);
    expect(err.message).not.toContain('ss_not-the-secret');
    expect(err.remedy).toMatch(/regenerate the key/);
    await r.clock.advance(HOUR);
    await rejection(r.manager.getToken());
    expect(r.sim.stats().getToken).toBe(1);
  });

  it('10003 (key without the extension scope) is reported with its remedy and does not stop the manager', async () => {
    const limited = await rig();
    const key = limited.sim.createApiKey({ name: 'events only', scopes: ['event:30011'] });
    limited.setCredentials(key);
    const err = await rejection(limited.listExtensions());
    expect(err).toMatchObject({ kind: 'scope', errcode: 10003, httpStatus: 403 });
    expect(err.remedy).toMatch(/grant the missing scope/);
    expect(limited.manager.health().state).toBe('ok');
  });

  it('10004 (IP not on the allowlist) needs attention until retry()', async () => {
    const r = await rig();
    r.sim.setAllowlist(r.sim.apiKey.key, ['10.9.8.7']);
    const err = await rejection(r.manager.getToken());
    expect(err).toMatchObject({ kind: 'ip', errcode: 10004 });
    expect(err.remedy).toMatch(/allowlist/);
    await r.clock.advance(HOUR);
    expect(r.sim.stats().getToken).toBe(1);
    r.sim.setAllowlist(r.sim.apiKey.key, ['127.0.0.1']);
    r.manager.retry();
    await settle();
    expect(r.manager.health().state).toBe('ok');
    expect(await r.listExtensions()).toBe(20);
  });

  it('503 twice: backs off, then recovers on its own', async () => {
    const r = await rig({ random: () => 1 });
    r.sim.failHttp({ status: 503, count: 2 });
    expect((await rejection(r.manager.getToken())).kind).toBe('server');
    expect(r.manager.health()).toMatchObject({ state: 'backoff', retryAt: r.clock.now() + 1000 });
    await rejection(r.manager.getToken()); // fast, no request
    expect(r.sim.stats().getToken).toBe(1);
    await r.clock.advance(1000);
    await settle();
    expect(r.manager.health()).toMatchObject({ state: 'backoff', retryAt: r.clock.now() + 2000 });
    await r.clock.advance(2000);
    await settle();
    expect(r.manager.health().state).toBe('ok');
    expect(r.sim.stats().getToken).toBe(3);
    expect(await r.listExtensions()).toBe(20);
  });

  it('429 with Retry-After: waits at least that long', async () => {
    const r = await rig({ random: () => 0 });
    r.sim.failHttp({ status: 429, count: 1, retryAfterSec: 90 });
    const err = await rejection(r.manager.getToken());
    expect(err).toMatchObject({ kind: 'rate-limit', httpStatus: 429, retryAfterMs: 90_000 });
    expect(r.manager.health()).toMatchObject({ state: 'backoff', retryAt: r.clock.now() + 90_000 });
    await r.clock.advance(89_000);
    await settle();
    expect(r.sim.stats().getToken).toBe(1);
    await r.clock.advance(1000);
    await settle();
    expect(r.sim.stats().getToken).toBe(2);
    expect(r.manager.health().state).toBe('ok');
  });

  it('a service that is not there is a network error', async () => {
    const r = await rig();
    const url = r.sim.baseUrl;
    await r.sim.close();
    const client = new ServiceClient({
      baseUrl: url,
      clock: r.clock,
      fetch: directTransport().fetch,
    });
    expect((await rejection(client.getToken('k', 's'))).kind).toBe('network');
  });

  it('a service address with a path names the path and the address to use, not "Update Screenpop"', async () => {
    // A newcomer copies the API's path into the address: the service answers 404 (errcode 40400)
    // for /openapi/v1.0/openapi/v1.0/get_token. Before: "The service rejected a request from
    // Screenpop as malformed. Update Screenpop; if it persists, report it."
    const r = await rig();
    for (const path of ['/openapi/v1.0', '/admin/']) {
      const client = new ServiceClient({
        baseUrl: r.sim.baseUrl + path,
        clock: r.clock,
        fetch: directTransport().fetch,
      });
      const err = await rejection(client.getToken(r.sim.apiKey.key, r.sim.apiKey.secret));
      const host = new URL(r.sim.baseUrl).host;
      expect(describeError(err), path).toMatchObject({
        fault: 'base-url-path',
        reason: `${host} has no phone system API under the path ${path.replace(/\/$/, '')} of the service address (HTTP 404).`,
        remedy: `In Settings, enter the Service address without a path: ${r.sim.baseUrl} (Screenpop adds /openapi/v1.0/ itself).`,
        needsUser: true,
      });
    }
  });
});
