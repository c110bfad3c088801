import { describe, expect, it } from 'vitest';
import { ServiceClient, EXTENSION_PAGE_SIZE } from '../../src-shared/api/service-client.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { describeError } from '../../src-shared/api/service-errors.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { FakeService, makeExtensions } from './fake-service.ts';
import pkg from '../../package.json' with { type: 'json' };
import { rejection } from './reject.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

function setup(timeoutMs = 10_000) {
  const clock = new FakeClock();
  const service = new FakeService(clock);
  const secrets = new SecretRegistry();
  const client = new ServiceClient({
    baseUrl: 'https://acme.example.com/',
    clock,
    fetch: service.fetch,
    timeoutMs,
    secrets,
  });
  return { clock, service, client, secrets };
}

describe('ServiceClient.getToken', () => {
  it('posts key and secret as JSON with our User-Agent and returns wall-clock deadlines', async () => {
    const { clock, service, client } = setup();
    const t0 = clock.now();
    const pair = await client.getToken(service.key, service.secret);
    const [req] = service.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url.href).toBe('https://acme.example.com/openapi/v1.0/get_token');
    expect(req?.headers.get('user-agent')).toBe(`Screenpop/${pkg.version}`);
    expect(req?.headers.get('content-type')).toBe('application/json');
    expect(req?.body).toEqual({ username: service.key, password: service.secret });
    expect(pair.accessToken).toMatch(/^at-/);
    expect(pair.accessExpiresAt).toBe(t0 + 1800_000);
    expect(pair.refreshExpiresAt).toBe(t0 + 86_400_000);
  });

  it('turns 10001 into a credentials error that never shows the secret', async () => {
    const { service, client } = setup();
    service.script('/get_token', {
      status: 401,
      body: { errcode: 10001, errmsg: `bad password ${service.secret}` },
    });
    const err = await rejection(client.getToken(service.key, service.secret));
    expect(err.kind).toBe('credentials');
    expect(err.errcode).toBe(10001);
    expect(err.message).not.toContain(service.secret);
    expect(err.message).toContain('[REDACTED]');
    expect(err.remedy).toMatch(/regenerate/);
  });

  it('scrubs the secret from errmsg before cutting it, wherever the cut falls', async () => {
    const { service, client } = setup();
    // The errmsg is cut to 120 characters; the secret sits across the cut at every offset.
    for (let at = 100; at <= 120; at++) {
      service.script('/get_token', {
        status: 401,
        body: { errcode: 10001, errmsg: `${'x'.repeat(at)}${service.secret} tail` },
      });
      const err = await rejection(client.getToken(service.key, service.secret));
      for (let n = 6; n <= service.secret.length; n++)
        expect(err.message, `secret at ${at}`).not.toContain(service.secret.slice(0, n));
    }
  });

  it('rejects a token pair with a missing field, naming the field and not the token', async () => {
    const { service, client } = setup();
    service.script('/get_token', {
      status: 200,
      body: {
        errcode: 0,
        access_token: 'leaky-access-token-1',
        access_token_expire_time: 1800,
        refresh_token: 'r-123456',
      },
    });
    const err = await rejection(client.getToken(service.key, service.secret));
    expect(err.kind).toBe('protocol');
    expect(err.message).toContain('refresh_token_expire_time');
    expect(err.message).not.toContain('leaky-access-token-1');
  });

  it('an address that never answered as the service is not the phone system: needs attention', async () => {
    // Another web server at the address: what a newcomer gets with a wrong --base-url.
    const { service, client } = setup();
    service.script('/get_token', {
      status: 404,
      body: '<html><head><title>404 Not Found</title></head><body>nginx</body></html>',
    });
    let err = await rejection(client.getToken(service.key, service.secret));
    expect(err).toMatchObject({ kind: 'not-service', fault: 'not-phone-system', retryable: false });
    expect(describeError(err)).toMatchObject({
      needsUser: true,
      reason:
        "acme.example.com answered, but not as the phone system's API: HTTP 404 with a web page titled “404 Not Found”.",
    });
    service.script('/get_token', { status: 200, body: '<html>Welcome</html>' });
    err = await rejection(client.getToken(service.key, service.secret));
    expect(describeError(err).reason).toBe(
      "acme.example.com answered, but not as the phone system's API: HTTP 200 with a web page.",
    );
    service.script('/get_token', { status: 200, body: { access_token: 'x' } });
    err = await rejection(client.getToken(service.key, service.secret));
    expect(err.kind).toBe('not-service');
    expect(describeError(err).reason).toContain('HTTP 200 with JSON without an errcode');
    // Statuses that are a server or a proxy in trouble keep their kinds.
    service.script('/get_token', { status: 503, body: '<html>down</html>' });
    expect((await rejection(client.getToken(service.key, service.secret))).kind).toBe('server');
  });

  it('once the address answered as the service, the same answers are passing trouble (retried)', async () => {
    const { service, client } = setup();
    await client.getToken(service.key, service.secret);
    service.script('/get_token', { status: 200, body: '<html>Sign in to the Wi-Fi</html>' });
    expect((await rejection(client.getToken(service.key, service.secret))).kind).toBe('protocol');
    service.script('/get_token', { status: 200, body: { access_token: 'x' } });
    const err = await rejection(client.getToken(service.key, service.secret));
    expect(err.kind).toBe('protocol');
    expect(err.message).toContain('errcode');
  });

  it('times out on the injected clock', async () => {
    const { clock, service, client } = setup(5000);
    service.script('/get_token', 'hang');
    const p = rejection(client.getToken(service.key, service.secret));
    await clock.advance(4999);
    let settled = false;
    void p.then(() => (settled = true));
    await clock.advance(0);
    expect(settled).toBe(false);
    await clock.advance(1);
    const err = await p;
    expect(err.kind).toBe('timeout');
    expect(err.retryable).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reports a connection failure as a network error and clears its timer', async () => {
    const { clock, service, client } = setup();
    service.script('/get_token', 'network');
    const err = await rejection(client.getToken(service.key, service.secret));
    expect(err.kind).toBe('network');
    expect(err.message).toContain('ECONNREFUSED');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('honours Retry-After on 429', async () => {
    const { service, client } = setup();
    service.script('/get_token', {
      status: 429,
      body: { errcode: 42900, errmsg: 'RATE' },
      headers: { 'Retry-After': '30' },
    });
    const err = await rejection(client.getToken(service.key, service.secret));
    expect(err.kind).toBe('rate-limit');
    expect(err.retryAfterMs).toBe(30_000);
  });
});

describe('ServiceClient.refreshToken', () => {
  it('sends the refresh token in the body only and returns a new pair', async () => {
    const { service, client } = setup();
    const first = await client.getToken(service.key, service.secret);
    const next = await client.refreshToken(first.refreshToken);
    const req = service.requestsTo('/refresh_token')[0];
    expect(req?.body).toEqual({ refresh_token: first.refreshToken });
    expect(req?.url.search).toBe('');
    expect(req?.headers.get('authorization')).toBeNull();
    expect(next.accessToken).not.toBe(first.accessToken);
    expect(next.refreshToken).not.toBe(first.refreshToken);
  });

  it('keeps the old refresh token when the answer carries none', async () => {
    const { service, client } = setup();
    service.refreshRotates = false;
    const first = await client.getToken(service.key, service.secret);
    const next = await client.refreshToken(first.refreshToken, first.refreshExpiresAt);
    expect(next.refreshToken).toBe(first.refreshToken);
    expect(next.refreshExpiresAt).toBe(first.refreshExpiresAt);
    // without the old deadline it cannot know: protocol error naming the field
    const err = await rejection(client.refreshToken(first.refreshToken));
    expect(err.message).toContain('refresh_token');
  });
});

describe('ServiceClient.listExtensions', () => {
  it('reads every page with page_size 100 and a bearer header, never a token in the URL', async () => {
    const { service, client } = setup();
    service.extensions = makeExtensions(250);
    const { accessToken } = await client.getToken(service.key, service.secret);
    const list = await client.listExtensions(accessToken);
    expect(list).toHaveLength(250);
    expect(list[0]).toMatchObject({ number: '101', callerIdName: 'Person 1' });
    const reqs = service.requestsTo('/extension/list');
    expect(reqs.map((r) => r.url.searchParams.get('page'))).toEqual(['1', '2', '3']);
    for (const r of reqs) {
      expect(r.url.searchParams.get('page_size')).toBe(String(EXTENSION_PAGE_SIZE));
      expect(r.headers.get('authorization')).toBe(`Bearer ${accessToken}`);
      expect(r.url.href).not.toContain(accessToken);
    }
  });

  it('tolerates missing and extra fields, skipping entries without a number', async () => {
    const { service, client } = setup();
    service.script('/extension/list', {
      status: 200,
      body: {
        errcode: 0,
        total_number: 4,
        extra: true,
        data: [
          { number: '101' },
          { number: 102, caller_id_name: 'Grace\nHopper', unknown: [1] },
          { caller_id_name: 'no number' },
          'junk',
        ],
      },
    });
    const list = await client.listExtensions('tok-123456');
    expect(list).toEqual([
      { number: '101', callerIdName: '' },
      { number: '102', callerIdName: 'Grace Hopper' },
    ]);
    expect(service.requestsTo('/extension/list')).toHaveLength(1);
  });

  it('stops on an empty page even if total_number promises more', async () => {
    const { service, client } = setup();
    service.script('/extension/list', {
      status: 200,
      body: { errcode: 0, total_number: 500, data: makeExtensions(100) },
    });
    service.script('/extension/list', {
      status: 200,
      body: { errcode: 0, total_number: 500, data: [] },
    });
    expect(await client.listExtensions('tok-123456')).toHaveLength(100);
    expect(service.requestsTo('/extension/list')).toHaveLength(2);
  });

  it('without total_number, a short page is the last', async () => {
    const { service, client } = setup();
    service.script('/extension/list', {
      status: 200,
      body: { errcode: 0, data: makeExtensions(100) },
    });
    service.script('/extension/list', {
      status: 200,
      body: { errcode: 0, data: makeExtensions(7) },
    });
    expect(await client.listExtensions('tok-123456')).toHaveLength(107);
  });

  it('reports 10002 as expired and a non-list data as protocol', async () => {
    const { service, client } = setup();
    const err = await rejection(client.listExtensions('unknown-token'));
    expect(err.kind).toBe('expired');
    expect(err.message).not.toContain('unknown-token');
    service.script('/extension/list', { status: 200, body: { errcode: 0, data: { a: 1 } } });
    const err2 = await rejection(client.listExtensions('tok-123456'));
    expect(err2.kind).toBe('protocol');
    expect(err2.message).toContain('"data"');
  });
});

describe('ServiceClient construction', () => {
  it('refuses a base address with credentials in it', () => {
    expect(
      () =>
        new ServiceClient({
          baseUrl: 'https://u:p@acme.example.com',
          clock: new FakeClock(),
          fetch: directTransport().fetch,
        }),
    ).toThrow(/credentials/);
  });
});
