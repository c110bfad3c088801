import { describe, expect, it } from 'vitest';
import { KeychainUnavailableError } from '../../src-main/core/credentials/credential-store.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { describeError, ServiceError } from '../../src-shared/api/service-errors.ts';
import type { Credentials, TokenHealth } from '../../src-main/core/api/token-manager.ts';
import {
  DEFAULT_CREDENTIALS_TIMEOUT_MS,
  DEFAULT_REFRESH_MARGIN_MS,
  TokenManager,
} from '../../src-main/core/api/token-manager.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { sleepReal } from '../../rigs/wait.ts';
import { FakeService, makeExtensions } from './fake-service.ts';
import { rejection } from './reject.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

function setup(
  opts: { random?: () => number; credentials?: () => Promise<Credentials | null> } = {},
) {
  const clock = new FakeClock();
  const service = new FakeService(clock);
  service.extensions = makeExtensions(3);
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const client = new ServiceClient({
    baseUrl: 'https://acme.example.com',
    clock,
    fetch: service.fetch,
    secrets,
  });
  let creds: Credentials | null = { key: service.key, secret: service.secret };
  const manager = new TokenManager({
    client,
    clock,
    secrets,
    logger,
    random: opts.random ?? (() => 0.5),
    credentials: opts.credentials ?? (async () => creds),
  });
  const healths: TokenHealth[] = [];
  manager.onHealth((h) => healths.push(h));
  const setCreds = (c: Credentials | null) => (creds = c);
  return { clock, service, client, manager, secrets, logger, healths, setCreds };
}

describe('TokenManager: getting and keeping a token', () => {
  it('exchanges key and secret once, then hands out the same token', async () => {
    const { service, manager } = setup();
    const a = await manager.getToken();
    const b = await manager.getToken();
    expect(b).toEqual(a);
    expect(service.counts).toMatchObject({ getToken: 1, refreshToken: 0 });
  });

  it('refreshes in the background five minutes before expiry', async () => {
    const { clock, service, manager } = setup();
    const first = await manager.getToken();
    await clock.advance(30 * MIN - DEFAULT_REFRESH_MARGIN_MS - 1);
    expect(service.counts.refreshToken).toBe(0);
    await clock.advance(1);
    expect(service.counts.refreshToken).toBe(1);
    const next = await manager.getToken();
    expect(next.value).not.toBe(first.value);
    expect(next.expiresAt - clock.now()).toBe(30 * MIN);
    expect(service.counts.getToken).toBe(1);
  });

  it('makes exactly one refresh for 100 concurrent callers at the instant of expiry', async () => {
    const { clock, service, manager } = setup();
    const first = await manager.getToken();
    // the laptop slept through the refresh timer: the wall clock is now exactly at expiry
    clock.sleep(first.expiresAt - clock.now());
    const tokens = await Promise.all(Array.from({ length: 100 }, () => manager.getToken()));
    expect(service.counts.refreshToken).toBe(1);
    expect(new Set(tokens.map((t) => t.value)).size).toBe(1);
    expect(tokens[0]?.value).not.toBe(first.value);
  });

  it('never presents a dead token after a three-hour sleep, even before wake()', async () => {
    const { clock, service, manager } = setup();
    await manager.getToken();
    clock.sleep(3 * HOUR);
    const list = await manager.call((t) =>
      new ServiceClient({
        baseUrl: 'https://acme.example.com',
        clock,
        fetch: service.fetch,
      }).listExtensions(t),
    );
    expect(list).toHaveLength(3);
    expect(service.counts).toMatchObject({ getToken: 1, refreshToken: 1, extensionList: 1 });
  });

  it('refreshes at once on wake() when the wall clock says the token is stale', async () => {
    const { clock, service, manager } = setup();
    await manager.getToken();
    clock.sleep(3 * HOUR);
    manager.wake();
    await flushMicrotasks();
    expect(service.counts.refreshToken).toBe(1);
    // and the refresh timer now follows the new token
    await clock.advance(25 * MIN);
    expect(service.counts.refreshToken).toBe(2);
  });

  it('exchanges key and secret again once the refresh token is past its 24 hours', async () => {
    const { clock, service, manager } = setup();
    await manager.getToken();
    clock.sleep(25 * HOUR);
    await manager.getToken();
    expect(service.counts).toMatchObject({ getToken: 2, refreshToken: 0 });
  });

  it('exchanges key and secret again when the refresh token is refused (10002 or 10001)', async () => {
    const { clock, service, manager } = setup();
    for (const errcode of [10002, 10001]) {
      const t = await manager.getToken();
      const before = service.counts.getToken;
      clock.sleep(t.expiresAt - clock.now());
      service.script('/refresh_token', { status: 401, body: { errcode, errmsg: 'NO' } });
      await manager.getToken();
      expect(service.counts.getToken).toBe(before + 1);
      expect(manager.health().state).toBe('ok');
    }
  });

  it('keeps refreshing ahead of time without a new login when refresh tokens are not rotated', async () => {
    const { clock, service, manager } = setup();
    service.refreshRotates = false;
    await manager.getToken();
    await clock.advance(23 * HOUR);
    expect(service.counts.getToken).toBe(1);
    expect(service.counts.refreshToken).toBeGreaterThan(50);
    await clock.advance(2 * HOUR); // the first refresh token has run out
    expect(service.counts.getToken).toBe(2);
    expect((await manager.getToken()).expiresAt).toBeGreaterThan(
      clock.now() + DEFAULT_REFRESH_MARGIN_MS,
    );
  });
});

describe('TokenManager.call', () => {
  it('on 10002 refreshes once and retries the call once', async () => {
    const { service, manager, client } = setup();
    await manager.getToken();
    service.expireAll();
    const seen: string[] = [];
    const list = await manager.call((t) => {
      seen.push(t);
      return client.listExtensions(t);
    });
    expect(list).toHaveLength(3);
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
    expect(service.counts.refreshToken).toBe(1);
  });

  it('gives up after one retry when the fresh token is refused too', async () => {
    const { service, manager } = setup();
    let calls = 0;
    const err = await rejection(
      manager.call(async () => {
        calls++;
        throw new ServiceError({ kind: 'expired', message: 'TOKEN EXPIRED', errcode: 10002 });
      }),
    );
    expect(err.errcode).toBe(10002);
    expect(calls).toBe(2);
    expect(service.counts.refreshToken).toBe(1);
  });

  it('100 concurrent calls refused with 10002 share one refresh', async () => {
    const { service, manager, client } = setup();
    await manager.getToken();
    service.expireAll();
    const results = await Promise.all(
      Array.from({ length: 100 }, () => manager.call((t) => client.listExtensions(t))),
    );
    expect(results.every((r) => r.length === 3)).toBe(true);
    expect(service.counts.refreshToken).toBe(1);
  });

  it('passes other errors through untouched, and 10004 on an API call needs attention', async () => {
    const { clock, manager, service } = setup();
    const scope = new ServiceError({ kind: 'scope', message: 'x', errcode: 10003 });
    expect(await rejection(manager.call(() => Promise.reject(scope)))).toBe(scope);
    expect(manager.health().state).toBe('ok');
    const ip = new ServiceError({ kind: 'ip', message: 'x', errcode: 10004 });
    await rejection(manager.call(() => Promise.reject(ip)));
    expect(manager.health()).toMatchObject({ state: 'needs-attention', error: ip });
    const requests = service.requests.length;
    expect(await rejection(manager.getToken())).toBe(ip);
    expect(service.requests.length).toBe(requests);
    expect(clock.pendingTimers()).toBe(0);
    // the allowlist is fixed; the still-fresh token is used again and kept fresh
    manager.retry();
    expect((await manager.getToken()).value).toMatch(/^at-/);
    await clock.advance(25 * MIN);
    expect(service.counts.refreshToken).toBe(1);
  });
});

describe('TokenManager: errors a person must fix', () => {
  it('10001 puts it in needs-attention and stops every retry until credentialsChanged()', async () => {
    const { clock, service, manager, setCreds, healths } = setup();
    setCreds({ key: service.key, secret: 'wrong-secret-000' });
    const err = await rejection(manager.getToken());
    expect(err.kind).toBe('credentials');
    expect(err.remedy).toMatch(/regenerate/);
    expect(manager.health().state).toBe('needs-attention');
    expect(healths.at(-1)?.state).toBe('needs-attention');
    // no retries, however long we wait or however often we ask
    await clock.advance(24 * HOUR);
    for (let i = 0; i < 10; i++) await rejection(manager.getToken());
    manager.wake();
    await flushMicrotasks();
    expect(service.counts.getToken).toBe(1);
    // the user fixes the secret
    setCreds({ key: service.key, secret: service.secret });
    manager.credentialsChanged();
    await flushMicrotasks();
    expect(service.counts.getToken).toBe(2);
    expect(manager.health().state).toBe('ok');
    expect((await manager.getToken()).value).toMatch(/^at-/);
  });

  it('10004 needs attention until retry()', async () => {
    const { service, manager } = setup();
    service.script('/get_token', {
      status: 403,
      body: { errcode: 10004, errmsg: 'IP NOT ALLOWED' },
    });
    const err = await rejection(manager.getToken());
    expect(err.kind).toBe('ip');
    expect(err.remedy).toMatch(/allowlist/);
    await rejection(manager.getToken());
    expect(service.counts.getToken).toBe(1);
    manager.retry();
    await flushMicrotasks();
    expect(manager.health().state).toBe('ok');
    await manager.getToken();
    expect(service.counts.getToken).toBe(2);
  });

  it('a refresh refused for the IP does not try a login on top', async () => {
    const { clock, service, manager } = setup();
    const t = await manager.getToken();
    clock.sleep(t.expiresAt - clock.now());
    service.script('/refresh_token', { status: 403, body: { errcode: 10004 } });
    expect((await rejection(manager.getToken())).kind).toBe('ip');
    expect(service.counts.getToken).toBe(1);
  });

  it('no credentials configured: needs attention with an actionable remedy, no request', async () => {
    const { service, manager } = setup({ credentials: async () => null });
    const err = await rejection(manager.getToken());
    expect(err.kind).toBe('credentials');
    expect(err.remedy).toMatch(/Settings/);
    expect(service.requests).toHaveLength(0);
  });

  it('a keychain failure becomes a credentials error without the secret in it', async () => {
    const { manager } = setup({
      credentials: async () => {
        throw new Error('Cannot autolaunch D-Bus without X11 $DISPLAY');
      },
    });
    const err = await rejection(manager.getToken());
    expect(err.kind).toBe('credentials');
    expect(err.message).toMatch(/keychain/);
    expect(err.remedy).toMatch(/keychain/);
  });

  it('a keychain that names its trouble keeps its words: keytar not installed, with the remedy for the OS', async () => {
    const { manager, service } = setup({
      credentials: async () => {
        throw new KeychainUnavailableError(
          'not-installed',
          "Cannot find package 'keytar'",
          'linux',
        );
      },
    });
    const err = await rejection(manager.getToken());
    expect(err.kind).toBe('credentials');
    expect(err.fault).toBe('keychain-not-installed');
    const said = describeError(err);
    expect(said.reason).toBe(
      'The keychain module (keytar) is not installed, so the API secret cannot be stored or read.',
    );
    expect(said.remedy).toContain('sudo apt-get install libsecret-1-dev');
    expect(said.needsUser).toBe(true);
    expect(service.requests).toHaveLength(0);
  });
});

describe('TokenManager: a keychain that never answers', () => {
  it('gives up after the timeout with needs-attention, and Try again asks the keychain anew', async () => {
    let answer: (() => Promise<Credentials | null>) | null = () => new Promise(() => {});
    const { clock, service, manager } = setup({ credentials: () => answer!() });
    const pending = rejection(manager.getToken());
    await clock.advance(DEFAULT_CREDENTIALS_TIMEOUT_MS - 1);
    expect(manager.health().state).toBe('ok');
    await clock.advance(1);
    const err = await pending;
    expect(err.kind).toBe('credentials');
    expect(err.message).toMatch(/keychain did not answer/);
    expect(manager.health().state).toBe('needs-attention');
    expect(service.requests).toHaveLength(0);
    answer = async () => ({ key: service.key, secret: service.secret });
    manager.retry();
    await expect(manager.getToken()).resolves.toMatchObject({ value: expect.any(String) });
    expect(manager.health().state).toBe('ok');
    expect(clock.pendingTimers()).toBeGreaterThan(0); // the refresh timer, not a stale keychain timer
    manager.stop();
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('TokenManager: back-off', () => {
  it('on 503 backs off with full jitter, rejects fast meanwhile, then recovers', async () => {
    const { clock, service, manager, healths } = setup({ random: () => 1 });
    service.script('/get_token', { status: 503, body: 'down' }, 3);
    const t0 = clock.now();
    expect((await rejection(manager.getToken())).kind).toBe('server');
    expect(manager.health()).toMatchObject({ state: 'backoff', retryAt: t0 + 1000 });
    // rejected fast, without a request
    expect((await rejection(manager.getToken())).kind).toBe('server');
    expect(service.counts.getToken).toBe(1);
    await clock.advance(1000); // retry 1 fails -> waits 2 s
    expect(service.counts.getToken).toBe(2);
    expect(manager.health()).toMatchObject({ state: 'backoff', retryAt: clock.now() + 2000 });
    await clock.advance(2000); // retry 2 fails -> waits 4 s
    expect(manager.health()).toMatchObject({ state: 'backoff', retryAt: clock.now() + 4000 });
    await clock.advance(4000); // retry 3 succeeds
    expect(service.counts.getToken).toBe(4);
    expect(manager.health().state).toBe('ok');
    expect(healths.map((h) => h.state)).toEqual(['backoff', 'backoff', 'backoff', 'ok']);
    await manager.getToken();
    expect(service.counts.getToken).toBe(4);
  });

  it('caps the exponential wait at 30 s and scales it by the random draw', async () => {
    const { clock, service, manager } = setup({ random: () => 0.5 });
    service.script('/get_token', 'network', 20);
    await rejection(manager.getToken());
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const h = manager.health();
      if (h.state !== 'backoff') throw new Error('expected backoff');
      waits.push(h.retryAt - clock.now());
      await clock.advance(h.retryAt - clock.now());
    }
    expect(waits.slice(0, 4)).toEqual([500, 1000, 2000, 4000]);
    expect(Math.max(...waits)).toBe(15_000); // 0.5 x the 30 s cap (backoff.ts says why)
  });

  it('honours Retry-After on 429 even when the jitter draws zero', async () => {
    const { clock, service, manager } = setup({ random: () => 0 });
    service.script('/get_token', {
      status: 429,
      body: { errcode: 42900 },
      headers: { 'Retry-After': '120' },
    });
    await rejection(manager.getToken());
    expect(manager.health()).toMatchObject({ state: 'backoff', retryAt: clock.now() + 120_000 });
    await clock.advance(119_999);
    expect(service.counts.getToken).toBe(1);
    await clock.advance(1);
    expect(service.counts.getToken).toBe(2);
    expect(manager.health().state).toBe('ok');
  });

  it('while a refresh inside the margin fails, the still-valid token keeps being handed out', async () => {
    const { clock, service, manager } = setup({ random: () => 1 });
    const first = await manager.getToken();
    service.script('/refresh_token', { status: 502, body: 'bad gateway' }, 2);
    await clock.advance(25 * MIN); // proactive refresh fails
    expect(manager.health().state).toBe('backoff');
    expect((await manager.getToken()).value).toBe(first.value);
    await clock.advance(3000); // two retries later the refresh succeeds
    expect(manager.health().state).toBe('ok');
    expect((await manager.getToken()).value).not.toBe(first.value);
  });

  it('a wake after the back-off deadline retries at once', async () => {
    const { clock, service, manager } = setup({ random: () => 1 });
    service.script('/get_token', 'network');
    await rejection(manager.getToken());
    clock.sleep(10 * MIN);
    manager.wake();
    await flushMicrotasks();
    expect(service.counts.getToken).toBe(2);
    expect(manager.health().state).toBe('ok');
  });

  it('when the network comes back, a grown back-off wait is over at once', async () => {
    const { clock, service, manager } = setup({ random: () => 1 });
    // Six failures in a row (1, 2, 4, 8, 16 s apart): the next wait has grown to the 30 s cap.
    service.script('/get_token', 'network', 6);
    await rejection(manager.getToken());
    await clock.advance(31_000 + 500);
    expect(service.counts.getToken).toBe(6);
    const health = manager.health();
    expect(health.state).toBe('backoff');
    const waitLeft = (health as { retryAt: number }).retryAt - clock.now();
    expect(waitLeft).toBeGreaterThan(25_000);
    // A wake that is not the network (a resume) keeps the wait...
    manager.wake('resume');
    await flushMicrotasks();
    expect(service.counts.getToken).toBe(6);
    // ...the network back ends it: one request now, and a caller meanwhile joins it.
    manager.wake('online');
    const token = manager.getToken();
    await flushMicrotasks();
    expect(service.counts.getToken).toBe(7);
    expect((await token).value).toMatch(/^at-/);
    expect(manager.health().state).toBe('ok');
  });

  it('the network coming back does not cut short a wait the service asked for (429 Retry-After)', async () => {
    const { clock, service, manager } = setup({ random: () => 0 });
    service.script('/get_token', {
      status: 429,
      body: { errcode: 42900 },
      headers: { 'Retry-After': '120' },
    });
    await rejection(manager.getToken());
    manager.wake('online');
    await flushMicrotasks();
    expect(service.counts.getToken).toBe(1);
    expect(manager.health()).toMatchObject({ state: 'backoff' });
    await clock.advance(120_000);
    expect(service.counts.getToken).toBe(2);
    expect(manager.health().state).toBe('ok');
  });
});

describe('TokenManager: secrecy and lifecycle', () => {
  it('no secret or token reaches a log line or a health error', async () => {
    const { clock, service, manager, logger } = setup({ random: () => 1 });
    service.script('/get_token', {
      status: 503,
      body: { errcode: 50300, errmsg: `oops ${service.secret}` },
    });
    await rejection(manager.getToken());
    await clock.advance(1000);
    const t = await manager.getToken();
    await clock.advance(26 * MIN);
    const text = JSON.stringify(logger.records);
    expect(logger.records.length).toBeGreaterThan(2);
    expect(text).not.toContain(service.secret);
    expect(text).not.toContain(t.value);
  });

  it('stop() leaves no timers behind', async () => {
    const { clock, manager } = setup();
    await manager.getToken();
    expect(clock.pendingTimers()).toBe(1);
    manager.stop();
    expect(clock.pendingTimers()).toBe(0);
    clock.sleep(HOUR);
    await manager.getToken(); // still works on demand
    expect(clock.pendingTimers()).toBe(0);
  });

  it('invalidate() drops only the current token', async () => {
    const { service, manager } = setup();
    const a = await manager.getToken();
    manager.invalidate('some-other-token');
    expect((await manager.getToken()).value).toBe(a.value);
    manager.invalidate(a.value);
    expect((await manager.getToken()).value).not.toBe(a.value);
    expect(service.counts.refreshToken).toBe(1);
  });
});

describe('TokenManager: lifetimes the service should not send', () => {
  it('a lifetime longer than a Node timer can hold does not turn the refresh timer into a loop', async () => {
    // Real timers: Node fires a setTimeout beyond 2^31-1 ms (~24.8 days) after 1 ms.
    const service = new FakeService(systemClock); // the same clock as the client's
    service.accessLifeSec = 100 * 24 * 3600;
    service.refreshLifeSec = 200 * 24 * 3600;
    const manager = new TokenManager({
      client: new ServiceClient({
        baseUrl: 'https://acme.example.com',
        clock: systemClock,
        fetch: service.fetch,
      }),
      clock: systemClock,
      credentials: async () => ({ key: service.key, secret: service.secret }),
    });
    await manager.getToken();
    await sleepReal(300);
    manager.stop();
    expect(service.counts).toMatchObject({ getToken: 1, refreshToken: 0 });
  });
});
