/**
 * The transport makes one TLS context and reuses it: building one from the trusted CA list (the
 * system's ~700 certificates and the CA file) on every connection blocked the event loop 30-140 ms
 * per HTTPS request (bench/crm-lookup.ts: the next ring's card waited behind CRM lookups).
 */
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { transportFor } from '../../src-main/core/net/network.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { certToolsAvailable, makeTestCa } from '../../rigs/certs.ts';

const canRun = certToolsAvailable('test/net/transport-context.test.ts');

describe.skipIf(!canRun)('NetTransport TLS context', () => {
  let dir = '';
  let server: https.Server;
  let caFile = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transport-ctx-'));
    const ca = makeTestCa(dir);
    caFile = ca.caFile;
    const cert = ca.issue('server');
    server = https.createServer({ cert: cert.cert, key: cert.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects every request with the same context, built once from the trusted CAs', async () => {
    const transport = transportFor(
      { proxyMode: 'none', proxyUrl: '', caFile },
      {
        logger: silentLogger,
        secrets: new SecretRegistry(),
        readFile: (p) => readFileSync(p, 'utf8'),
      },
    );
    const connect = vi.spyOn(tls, 'connect');
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      for (let i = 0; i < 3; i++) expect(await (await transport.fetch(url)).text()).toBe('ok');
      const contexts = connect.mock.calls.map((c) => (c[0] as tls.ConnectionOptions).secureContext);
      expect(contexts).toHaveLength(3);
      expect(contexts[0]).toBeDefined();
      expect(new Set(contexts).size).toBe(1);
      for (const c of connect.mock.calls)
        expect((c[0] as tls.ConnectionOptions).ca).toBeUndefined();
    } finally {
      connect.mockRestore();
    }
  });
});
