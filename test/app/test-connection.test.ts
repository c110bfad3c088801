import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  checkBaseUrl,
  testConnection,
  type ConnectionProbe,
  type TestConnectionInput,
} from '../../src-main/core/connection/test-connection.ts';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { otherWebServer } from '../support/other-web-server.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const input: TestConnectionInput = {
  baseUrl: 'https://acme.example.com',
  apiKey: 'k',
  secret: 's3cret-value',
  extensions: ['101'],
  defaultRegion: 'US',
};

function run(
  probe: Partial<ConnectionProbe>,
  localAddress: string | null = null,
  over: Partial<TestConnectionInput> = {},
) {
  return testConnection(
    { ...input, ...over },
    {
      createProbe: () => ({
        getToken: async () => 'tok',
        listExtensions: async () => [],
        ...probe,
      }),
      logger: silentLogger,
      localAddress: async () => localAddress,
    },
  );
}

describe('testConnection', () => {
  it('"This proxy" without an address: says why the test cannot go out and what to do', async () => {
    const result = await testConnection(input, {
      // What the real transport throws for proxyMode manual without an address.
      createProbe: () =>
        transportFor(
          { proxyMode: 'manual', proxyUrl: '', caFile: '' },
          { logger: silentLogger, secrets: new SecretRegistry(), readFile: () => '' },
        ) as never,
      logger: silentLogger,
      localAddress: async () => null,
    });
    expect(result).toMatchObject({
      ok: false,
      message:
        'The proxy setting sends connections through a proxy, but no usable proxy address is set: Screenpop does not connect around the proxy.',
    });
  });

  it('checks the draft before calling anything', async () => {
    expect(await run({}, null, { baseUrl: 'http://acme.example.com' })).toMatchObject({
      ok: false,
      message: 'The service address must start with https://.',
    });
    expect(await run({}, null, { apiKey: ' ' })).toMatchObject({
      ok: false,
      message: 'The API key is empty.',
    });
    expect(await run({}, null, { secret: null })).toMatchObject({
      ok: false,
      message: 'No API secret is set.',
    });
    expect(checkBaseUrl('http://127.0.0.1:8080').ok).toBe(true);
    expect(checkBaseUrl('https://u:p@x.example').ok).toBe(false);
  });

  it("names the user's extension when the list has it", async () => {
    const r = await run({
      listExtensions: async () => [
        { number: '101', callerIdName: 'Ada Lovelace' },
        { number: '102', callerIdName: 'Bob' },
      ],
    });
    expect(r).toEqual({
      ok: true,
      message: 'Connected. Extension 101 belongs to Ada Lovelace.',
      extensionName: 'Ada Lovelace',
      extensionCount: 2,
    });
    const missing = await run({
      listExtensions: async () => [{ number: '102', callerIdName: 'Bob' }],
    });
    expect(missing).toMatchObject({ ok: true, remedy: 'Check the extension number.' });
  });

  it('explains 10001 and 10003 with the remedy', async () => {
    const bad = await run({
      getToken: async () =>
        Promise.reject(
          new ServiceError({
            kind: 'credentials',
            errcode: 10001,
            message: 'get_token: errcode 10001',
          }),
        ),
    });
    expect(bad).toMatchObject({
      ok: false,
      errcode: 10001,
      message: 'The service rejected the API key or secret.',
      remedy: expect.stringContaining('regenerate'),
    });
    const scope = await run({
      listExtensions: async () =>
        Promise.reject(new ServiceError({ kind: 'scope', errcode: 10003, message: 'x' })),
    });
    expect(scope).toMatchObject({
      ok: false,
      errcode: 10003,
      message: expect.stringContaining('may not list extensions'),
    });
  });

  it('for 10004 gives the IP the service reported, else the outbound address, and says which', async () => {
    const err = (msg: string) => async () =>
      Promise.reject(new ServiceError({ kind: 'ip', errcode: 10004, message: msg }));
    expect(
      await run({ getToken: err('get_token: errcode 10004 (IP 198.51.100.23 NOT ALLOWED)') }),
    ).toMatchObject({
      ipToAllow: '198.51.100.23',
      message: expect.stringContaining('as the service sees it'),
    });
    expect(await run({ getToken: err('errcode 10004') }, '203.0.113.9')).toMatchObject({
      ipToAllow: '203.0.113.9',
      message: expect.stringContaining('outbound address is 203.0.113.9'),
    });
    const nat = await run({ getToken: err('errcode 10004') }, '192.168.1.20');
    expect(nat).toMatchObject({
      ipToAllow: '192.168.1.20',
      message: expect.stringContaining('public IP as the service sees it'),
    });
    expect((await run({ getToken: err('errcode 10004') }, null)).ipToAllow).toBeUndefined();
    const lan = await run({ getToken: err('errcode 10004') }, '10.0.0.5', {
      baseUrl: 'http://127.0.0.1:8080',
    });
    expect(lan).toMatchObject({
      ipToAllow: '10.0.0.5',
      message: expect.stringContaining('the address it sees'),
    });
  });

  it('says when the service cannot be reached, without the secret', async () => {
    const r = await run({
      getToken: async () =>
        Promise.reject(new ServiceError({ kind: 'network', message: 'fetch failed s3cret-value' })),
    });
    // The words of the tray and the runner for the same fault.
    const reason = 'The service cannot be reached.';
    const remedy =
      'Check the network connection and the service address in Settings; Screenpop tries again by itself.';
    expect(r).toEqual({ ok: false, message: reason, remedy });
    expect(JSON.stringify(r)).not.toContain('s3cret-value');
  });

  it('says what answers at an address that is not the phone system (a real web server)', async () => {
    const web = await otherWebServer();
    try {
      const r = await testConnection(
        { ...input, baseUrl: web.baseUrl },
        {
          createProbe: (i) => {
            const client = new ServiceClient({
              baseUrl: i.baseUrl,
              clock: systemClock,
              fetch: directTransport().fetch,
            });
            return {
              getToken: async () => (await client.getToken(i.apiKey, i.secret)).accessToken,
              listExtensions: (token) => client.listExtensions(token),
            };
          },
          logger: silentLogger,
          localAddress: async () => null,
        },
      );
      expect(r).toEqual({
        ok: false,
        message: `${web.host} answered, but not as the phone system's API: HTTP 404 with a web page titled “404 Not Found”.`,
        remedy:
          "Check the service address in Settings: it is your phone system's own address (as its admin console shows it), not another web server's.",
      });
    } finally {
      await web.close();
    }
  });

  it('names the host, the port and what happened when nothing answers there', async () => {
    // A port where nothing listens (closed again at once). Before: "The service cannot be
    // reached." with no address and no cause.
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((done) => server.close(() => done()));
    const r = await testConnection(
      { ...input, baseUrl: `http://127.0.0.1:${port}` },
      {
        createProbe: (i) => {
          const client = new ServiceClient({
            baseUrl: i.baseUrl,
            clock: systemClock,
            fetch: directTransport().fetch,
          });
          return {
            getToken: async () => (await client.getToken(i.apiKey, i.secret)).accessToken,
            listExtensions: (token) => client.listExtensions(token),
          };
        },
        logger: silentLogger,
        localAddress: async () => null,
      },
    );
    expect(r).toEqual({
      ok: false,
      message: `127.0.0.1:${port} cannot be reached: the connection was refused (nothing listens on that port, or a firewall refuses it).`,
      remedy: `Check the address in Settings, and that this computer can reach 127.0.0.1:${port} (network, firewall); Screenpop tries again by itself.`,
    });
  });
});

describe('testConnection on Yeastar: set-up checks and the token it took', () => {
  const YS = { phoneSystem: 'yeastar-p-series' as const };

  it('says one application per desktop (or the gateway) and Call Status Monitor; not on the standard service', async () => {
    const ys = await run({}, null, YS);
    expect(ys.ok).toBe(true);
    expect(ys.checks).toHaveLength(2);
    expect(ys.checks![0]).toContain('gateway mode');
    expect(ys.checks![1]).toContain('Call Status Monitor');
    expect((await run({})).checks).toBeUndefined();
  });

  it('an address with no API (10001) adds which appliances have it', async () => {
    const result = await run(
      {
        getToken: async () => {
          throw new ServiceError({
            kind: 'unsupported',
            fault: 'ys-api-off',
            errcode: 10001,
            message: 'x',
          });
        },
      },
      null,
      YS,
    );
    expect(result.ok).toBe(false);
    expect(result.checks![0]).toContain('P550, P560 and P570');
  });

  it("an address to allow is said in the PBX portal's terms: the message id comes from the wire", async () => {
    const refused = async () =>
      Promise.reject(new ServiceError({ kind: 'ip', errcode: 70087, message: 'x' }));
    expect(await run({ getToken: refused }, '203.0.113.9', YS)).toMatchObject({
      ipToAllow: '203.0.113.9',
      ipToAllowMessage: 'settings.test.ip-yeastar',
    });
    const standard = await run({ getToken: refused }, '203.0.113.9');
    expect(standard.ipToAllow).toBe('203.0.113.9');
    expect(standard.ipToAllowMessage).toBeUndefined();
  });

  it('gives back the token it took, after the list, even when the list fails', async () => {
    const released: string[] = [];
    await run(
      {
        getToken: async () => 'tok-taken',
        listExtensions: async () => {
          throw new ServiceError({ kind: 'server', message: 'x' });
        },
        release: async (token) => {
          released.push(token);
        },
      },
      null,
      YS,
    );
    expect(released).toEqual(['tok-taken']);
  });
});
