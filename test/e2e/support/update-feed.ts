/**
 * A generic electron-updater feed over HTTPS on 127.0.0.1, as an organisation would host one:
 * latest-linux.yml announcing a newer version, and that version's AppImage (random bytes with
 * their true sha512, which electron-updater checks). The certificate is self-signed for 127.0.0.1
 * (openssl), trusted by the app through the `caFile` setting as an organisation's private CA
 * (updates go out the app's way: src-main/electron/update-network.ts); every request is recorded.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface UpdateFeed {
  url: string;
  /** The feed's self-signed certificate: what an administrator gives Screenpop as its CA file. */
  certFile: string;
  version: string;
  requests: string[];
  close(): Promise<void>;
}

export async function startUpdateFeed(version = '99.0.0'): Promise<UpdateFeed> {
  const dir = await mkdtemp(join(tmpdir(), 'screenpop-feed-'));
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`);
  const file = `Screenpop-${version}.AppImage`;
  const body = randomBytes(64 * 1024);
  const sha512 = createHash('sha512').update(body).digest('base64');
  const yml = [
    `version: ${version}`,
    'files:',
    `  - url: ${file}`,
    `    sha512: ${sha512}`,
    `    size: ${body.length}`,
    `path: ${file}`,
    `sha512: ${sha512}`,
    "releaseDate: '2026-11-22T09:00:00.000Z'",
    '',
  ].join('\n');
  const requests: string[] = [];
  const server: Server = createServer(
    { key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'https://127.0.0.1').pathname;
      requests.push(`${req.method} ${path}`);
      if (path === '/feed/latest-linux.yml')
        res.writeHead(200, { 'Content-Type': 'text/yaml' }).end(yml);
      else if (path === `/feed/${file}`)
        res
          .writeHead(200, {
            'Content-Type': 'application/octet-stream',
            'Content-Length': body.length,
          })
          .end(body);
      else res.writeHead(404).end();
    },
  );
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('feed has no port');
  return {
    url: `https://127.0.0.1:${address.port}/feed`,
    certFile: join(dir, 'cert.pem'),
    version,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
