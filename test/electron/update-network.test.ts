/**
 * Updates go out the app's way: electron-updater's own request executor (the real one from
 * node_modules, ElectronHttpExecutor), routed through the transport of the settings
 * (update-network.ts), fetches a feed and downloads a file from an HTTPS server whose certificate
 * only the administrator's CA file vouches for, through a CONNECT proxy that wants Basic
 * credentials (the keychain's). Without the routing it would use Electron's `net` with its own
 * session, which knows neither.
 */
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transportFor } from '../../src-main/core/net/network.ts';
import {
  isUpdateRequestExecutor,
  routeUpdateRequests,
} from '../../src-main/electron/update-network.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { certToolsAvailable, makeTestCa } from '../../rigs/certs.ts';

const require = createRequire(import.meta.url);
const { ElectronHttpExecutor } = require('electron-updater/out/electronHttpExecutor') as {
  ElectronHttpExecutor: new () => {
    request(options: Record<string, unknown>, token: unknown): Promise<string | null>;
    download(url: URL, destination: string, options: Record<string, unknown>): Promise<string>;
  };
};
const { CancellationToken } = require('builder-util-runtime') as {
  CancellationToken: new () => unknown;
};

const canRun = certToolsAvailable('test/electron/update-network.test.ts');
const CREDENTIALS = 'agent:s3cret';
const FEED = 'version: 1.1.0\npath: Screenpop-1.1.0.AppImage\n';
const BINARY = Buffer.alloc(300_000, 7);

describe.skipIf(!canRun)('electron-updater through the app’s network', () => {
  let dir = '';
  let caFile = '';
  let server: https.Server;
  let proxy: net.Server;
  const proxySaw: Array<{ target: string; auth: string | null }> = [];
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-update-net-'));
    const ca = makeTestCa(dir);
    caFile = ca.caFile;
    const cert = ca.issue('server');
    server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      if (req.url === '/feed/latest-linux.yml') return res.end(FEED);
      if (req.url === '/feed/old.AppImage') {
        res.writeHead(302, { location: '/feed/Screenpop-1.1.0.AppImage' });
        return res.end();
      }
      if (req.url === '/feed/Screenpop-1.1.0.AppImage') return res.end(BINARY);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    // A proxy as RFC 9110 9.3.6 has it, that wants Basic credentials (RFC 9110 11.7.1: 407).
    proxy = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      let head = '';
      const onData = (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        const target = /^CONNECT (\S+) /.exec(head)?.[1] ?? '';
        const auth = /^proxy-authorization: basic (\S+)\r$/im.exec(head)?.[1] ?? null;
        proxySaw.push({ target, auth });
        if (auth !== Buffer.from(CREDENTIALS).toString('base64')) {
          socket.end(
            'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\nContent-Length: 0\r\n\r\n',
          );
          return;
        }
        const [host, port] = target.split(':');
        const upstream = net.connect(Number(port), host!, () => {
          socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(socket).pipe(upstream);
        });
        upstream.on('error', () => socket.destroy());
      };
      socket.on('data', onData);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await new Promise((r) => proxy.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  function routedExecutor() {
    const transport = transportFor(
      {
        proxyMode: 'manual',
        proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        caFile,
      },
      {
        logger: silentLogger,
        secrets: new SecretRegistry(),
        readFile: (p) => readFileSync(p, 'utf8'),
        proxyCredentials: async () => CREDENTIALS,
      },
    );
    const executor = new ElectronHttpExecutor();
    expect(isUpdateRequestExecutor(executor)).toBe(true);
    if (isUpdateRequestExecutor(executor))
      routeUpdateRequests(executor, (url) => transport.agentFor(url));
    return executor;
  }

  it('reads the feed and downloads the update (after a redirect) through the proxy, trusting the CA file', async () => {
    const executor = routedExecutor();
    const port = (server.address() as AddressInfo).port;
    const feed = await executor.request(
      { protocol: 'https:', hostname: '127.0.0.1', port, path: '/feed/latest-linux.yml' },
      new CancellationToken(),
    );
    expect(feed).toBe(FEED);
    const file = join(dir, 'download.AppImage');
    await executor.download(new URL(`https://127.0.0.1:${port}/feed/old.AppImage`), file, {
      cancellationToken: new CancellationToken(),
      skipDirCreation: true,
    });
    expect(readFileSync(file).equals(BINARY)).toBe(true);
    // Every request went through the proxy, with the keychain's credentials (the first CONNECT
    // may ask without any, to learn the proxy's scheme: src-shared/net/tunnel.ts; the proxy
    // refuses it and closes without saying so, and the tunnel goes on on a new connection).
    const withCredentials = proxySaw.filter((seen) => seen.auth !== null);
    expect(withCredentials.length).toBeGreaterThanOrEqual(2);
    for (const seen of proxySaw) expect(seen.target).toBe(`127.0.0.1:${port}`);
    for (const seen of withCredentials)
      expect(seen.auth).toBe(Buffer.from(CREDENTIALS).toString('base64'));
  });
});
