/**
 * Which tenant the relay client asks the relay for: the relayTenant setting, else the first label of
 * the service's host name, and never a made-up one for a service reached by IP address or localhost.
 * The far sides are the simulator (tokens) and a bare HTTP server that records the relay handshake.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RELAY_TENANT_UNKNOWN,
  relayTenantFor,
  serviceConnectionFactory,
} from '../../src-main/core/connection/connection.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { startSimulator } from '../../src-sim/index.ts';
import { otherWebServer } from '../support/other-web-server.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function settings(patch: Partial<Settings>): Settings {
  return { ...structuredClone(DEFAULT_SETTINGS), extensions: ['101'], ...patch };
}

/** A stand-in relay: records each WebSocket upgrade's path and refuses it with 404 (unknown tenant). */
async function recordingRelay(): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: IncomingMessage, socket) => {
    paths.push(req.url ?? '');
    // The client may reset after reading the 404 (it destroys its request): not this test's error.
    socket.on('error', () => {});
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('relayTenantFor', () => {
  it('uses the relayTenant setting when set, whatever the host', () => {
    expect(relayTenantFor({ relayTenant: 'globex' }, 'https://acme.example.com')).toBe('globex');
    expect(relayTenantFor({ relayTenant: ' initech ' }, 'http://127.0.0.1:8080')).toBe('initech');
    expect(relayTenantFor({ relayTenant: 'acme-eu' }, 'http://localhost:9000')).toBe('acme-eu');
  });

  it('otherwise takes the first label of a host name', () => {
    expect(relayTenantFor({ relayTenant: '' }, 'https://acme.example.com')).toBe('acme');
    expect(relayTenantFor({ relayTenant: '' }, 'https://globex.pbx.example.org/api')).toBe(
      'globex',
    );
  });

  it('does not guess a tenant for an IP address or localhost', () => {
    for (const base of [
      'http://127.0.0.1:8080',
      'https://203.0.113.7',
      'http://localhost:9000',
      'http://[::1]:9000',
      'https://[2001:db8::1]',
    ])
      expect(relayTenantFor({ relayTenant: '' }, base)).toBeNull();
  });
});

describe('serviceConnectionFactory and the relay tenant', () => {
  it('asks the relay for the relayTenant setting', async () => {
    const sim = await startSimulator({ extensions: 3 });
    cleanups.push(() => sim.close());
    const relay = await recordingRelay();
    const connect = serviceConnectionFactory({
      clock: systemClock,
      logger: memoryLogger(),
      secrets: new SecretRegistry(),
      transport: () => directTransport(),
    });
    const connection = connect({
      baseUrl: sim.baseUrl,
      settings: settings({
        baseUrl: sim.baseUrl,
        apiKey: sim.apiKey.key,
        relayUrl: relay.url,
        relayTenant: 'globex',
        eventSource: 'relay',
      }),
      credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    });
    cleanups.push(() => connection.stop());
    connection.engine.start();
    await until(() => relay.paths.length > 0);
    expect(relay.paths[0]).toBe('/v1/stream/globex');
  });

  it('leaves the relay out for a service on an IP address without relayTenant, and says to set it', async () => {
    const logger = memoryLogger();
    const connect = serviceConnectionFactory({
      clock: systemClock,
      logger,
      secrets: new SecretRegistry(),
      transport: () => directTransport(),
    });
    const relay = await recordingRelay();
    const baseUrl = 'http://127.0.0.1:9';
    const connection = connect({
      baseUrl,
      settings: settings({ baseUrl, apiKey: 'k', relayUrl: relay.url, eventSource: 'relay' }),
      credentials: async () => null,
    });
    cleanups.push(() => connection.stop());
    const seen: ConnectionStatus[] = [];
    connection.engine.onStatus((s) => seen.push(s));
    connection.engine.start();
    expect(connection.engine.status()).toMatchObject({
      state: 'needs-attention',
      reason: RELAY_TENANT_UNKNOWN.reason,
    });
    expect(connection.engine.status().remedy).toMatch(/Set the relay tenant in Settings/);
    expect(seen.at(-1)?.state).toBe('needs-attention');
    expect(
      logger.records.some((r) => r.level === 'warn' && /set the relay tenant/i.test(r.msg)),
    ).toBe(true);
    // Nothing was sent to the relay under a made-up tenant.
    await new Promise((r) => setTimeout(r, 100));
    expect(relay.paths).toEqual([]);
  });
});

describe('a service address that answers, but is not the phone system', () => {
  it('is needs-attention naming what was found there, and not retried in a loop', async () => {
    const web = await otherWebServer();
    cleanups.push(() => web.close());
    const connect = serviceConnectionFactory({
      clock: systemClock,
      logger: memoryLogger(),
      secrets: new SecretRegistry(),
      transport: () => directTransport(),
    });
    const connection = connect({
      baseUrl: web.baseUrl,
      settings: settings({ baseUrl: web.baseUrl, apiKey: 'k' }),
      credentials: async () => ({ key: 'k', secret: 's' }),
    });
    cleanups.push(() => connection.stop());
    connection.engine.start();
    await until(() => connection.engine.status().state === 'needs-attention');
    expect(connection.engine.status()).toMatchObject({
      reason: `${web.host} answered, but not as the phone system's API: HTTP 404 with a web page titled “404 Not Found”.`,
      remedy: expect.stringContaining('Check the service address in Settings'),
    });
    // Before: "The service rejected a request from Screenpop as malformed. Update Screenpop",
    // retried with the back-off for ever.
    const asked = web.requests.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(web.requests.length).toBe(asked);
  });
});
