/**
 * The relay's calls to the service (token checks; a gateway's token and stream; single sign-on's
 * discovery) go through its transport (src-relay/outbound.ts, the one NetTransport), not Node's
 * fetch: loading Node's fetch (undici) at the first token check added ~16 MiB to the relay's
 * resident memory, counted against every deployment with clients (issue 24). Proven on the built
 * relay as it ships, and the transport's fetch against a real HTTP server (the answers' far side,
 * as Node's fetch sees it).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directTransport } from '../../src-relay/outbound.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { SECRET, TestClient, startTokenService } from '../../rigs/relay/helpers.ts';
import { spawnRelay } from '../../rigs/relay/relay-process.ts';

describe('the built relay checking tokens', () => {
  it('checks them without loading Node’s fetch implementation (undici)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-modules-'));
    const report = join(dir, 'loaded.txt');
    const service = await startTokenService(new Set(['good-token']));
    const relay = await spawnRelay({
      nodeArgs: ['--import', './test/blackbox/fixtures/report-modules.ts'],
      env: {
        REPORT_MODULES_FILE: report,
        RELAY_STORAGE: 'memory',
        RELAY_TENANT_ACME_SECRETS: SECRET,
        RELAY_TENANT_ACME_BASE_URL: service.baseUrl,
      },
    });
    try {
      const url = relay.url.replace(/^http/, 'ws') + '/v1/stream/acme';
      const client = await TestClient.connect(url, 'good-token', { extensions: ['101'] });
      expect(client.controls.map((c) => c.type)).toEqual(['ready']);
      client.close();
      await expect(
        TestClient.connect(url, 'unknown-token', { extensions: ['101'] }),
      ).rejects.toThrow('handshake refused: 401');
    } finally {
      expect((await relay.stop()).code).toBe(0);
      await service.close();
    }
    const loaded = readFileSync(report, 'utf8').split('\n');
    rmSync(dir, { recursive: true, force: true });
    expect(loaded).toContain('NativeModule http');
    expect(loaded.filter((m) => m.includes('undici'))).toEqual([]);
  }, 30_000);
});

describe("the relay transport's fetch", () => {
  const relayFetch = directTransport({ logger: silentLogger, secrets: new SecretRegistry() }).fetch;
  let server: http.Server;
  let base: string;
  const seen: http.IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/big') res.end('x'.repeat(1024 * 1024 + 1));
      else if (req.url === '/slow') setTimeout(() => res.end('{}'), 2_000);
      else res.writeHead(401, { 'content-type': 'application/json' }).end('{"errcode":10003}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('answers as Node’s fetch does: status, headers, JSON; sends the headers given', async () => {
    const [lean, node] = await Promise.all([
      relayFetch(`${base}/x`, { headers: { Authorization: 'Bearer t' } }),
      fetch(`${base}/x`, { headers: { Authorization: 'Bearer t' } }),
    ]);
    expect([lean.status, lean.ok, lean.headers.get('content-type')]).toEqual([
      node.status,
      node.ok,
      node.headers.get('content-type'),
    ]);
    expect(await lean.json()).toEqual(await node.json());
    expect(seen.at(-1)!.authorization).toBe('Bearer t');
  });

  it('rejects: nothing listening and a body beyond 1 MiB (TypeError), a time-out (AbortError)', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(relayFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(TypeError);
    await expect(
      relayFetch(`${base}/slow`, { signal: AbortSignal.timeout(100) }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    await expect(relayFetch(`${base}/big`)).rejects.toThrow(TypeError);
  });
});
