/**
 * A relay that cannot start says what failed, in words an administrator acts on, and exits 1
 * (it used to print ioredis' "Connection is closed." for a wrong Redis address). Each case runs
 * the shipped command (`node dist-relay/screenpop-relay.cjs`) against the real component: a redis-server this
 * file starts, a port in use, certificate files made with openssl. (Redis with a password:
 * startup-redis.test.ts, which needs redis-server and so runs only at the real date.)
 */
import { createServer, type Server } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { certToolsAvailable, makeTestCa } from '../../rigs/certs.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { freePort } from '../../rigs/relay/helpers.ts';
import { runRelayCli, runRelayWith } from '../../rigs/relay/relay-process.ts';

const tmp = useTempDir('relay-startup-');

const start = (config: Record<string, unknown>, args: string[] = []) =>
  runRelayWith(tmp.path, config, args);

describe('Redis that cannot be used', () => {
  it('a wrong address: names it, says nothing listens there and which setting to check', async () => {
    const port = await freePort();
    const r = await start({ storage: { kind: 'redis', url: `redis://127.0.0.1:${port}` } });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(
        `relay: cannot start: storage: cannot connect to Redis at redis://127\\.0\\.0\\.1:${port}: the connection was refused`,
      ),
    );
    expect(r.err).toMatch(/Check storage\.url in the config \(or RELAY_REDIS_URL\)/);
    expect(r.err).not.toMatch(/^relay: Connection is closed\.$/m);
  });

  it('a host name that does not resolve', async () => {
    const r = await start({ storage: { kind: 'redis', url: 'redis://redis.invalid:6379' } });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/the host name redis\.invalid was not found/);
  });

  it('a server that accepts and never answers: no answer within the time-out', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as { port: number }).port;
      const r = await start({
        storage: { kind: 'redis', url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 1000 },
      });
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/no answer within 1 s/);
    } finally {
      silent.close();
    }
  });
});

describe('files and addresses', () => {
  it('a config file that does not exist', async () => {
    const r = await runRelayCli(['--config', join(tmp.path, 'nope.json')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/relay config: cannot read .*nope\.json: it does not exist\./);
  });

  it('a port another program holds: names the port and RELAY_PORT', async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (holder.address() as { port: number }).port;
      const r = await start({ host: '127.0.0.1', port });
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*RELAY_PORT`),
      );
    } finally {
      holder.close();
    }
  });

  it('a snapshot folder that does not exist', async () => {
    const r = await start({
      storage: { kind: 'memory', snapshotFile: join(tmp.path, 'missing', 'snap.json') },
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /storage\.snapshotFile: the relay cannot write into .*missing \(it does not exist\)/,
    );
  });

  const haveCerts = certToolsAvailable('test/relay/startup.test.ts');

  it('the connections out: a CA file missing or without a certificate, a malformed HTTPS_PROXY', async () => {
    const noProxy = { HTTPS_PROXY: '', https_proxy: '', ALL_PROXY: '', all_proxy: '' };
    const missing = await start({ outbound: { caFile: join(tmp.path, 'none.pem') } }, [
      '--check-config',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(
      /error: outbound\.caFile: cannot read .*none\.pem: it does not exist\. Name a PEM file \(or set RELAY_CA_FILE\)/,
    );
    const notPem = join(tmp.path, 'not-a-ca.pem');
    writeFileSync(notPem, 'this is not a certificate\n');
    const fromEnv = await runRelayWith(tmp.path, {}, [], { ...noProxy, RELAY_CA_FILE: notPem });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.err).toMatch(
      /relay: cannot start: [\s\S]*outbound\.caFile: The CA file .*not-a-ca\.pem holds no PEM certificate/,
    );
    const badProxy = await runRelayWith(tmp.path, {}, ['--check-config'], {
      ...noProxy,
      https_proxy: 'socks5://proxy.example:1080',
    });
    expect(badProxy.code).toBe(1);
    expect(badProxy.out).toMatch(
      /error: HTTPS_PROXY: .* write it as http:\/\/proxy\.example\.com:3128/,
    );
  });

  it.runIf(haveCerts)(
    'TLS: a missing file, a key of another certificate, an expired certificate',
    async () => {
      const ca = makeTestCa(tmp.path);
      const good = ca.issue('relay');
      const other = ca.issue('other');
      const expired = ca.issue('old', { expired: true });

      const missing = await start({
        tls: { certFile: join(tmp.path, 'none.crt'), keyFile: good.keyFile },
      });
      expect(missing.code).toBe(1);
      expect(missing.err).toMatch(/tls\.certFile: cannot read .*none\.crt: it does not exist\./);

      const mismatch = await start({ tls: { certFile: good.certFile, keyFile: other.keyFile } });
      expect(mismatch.code).toBe(1);
      expect(mismatch.err).toMatch(/tls: the certificate .* and key .* cannot be used together/);

      const old = await start({ tls: { certFile: expired.certFile, keyFile: expired.keyFile } }, [
        '--check-config',
      ]);
      expect(old.code).toBe(1);
      expect(old.out).toMatch(/error: tls\.certFile: the certificate .*old\.crt expired on /);

      const ok = await start({ tls: { certFile: good.certFile, keyFile: good.keyFile } }, [
        '--check-config',
      ]);
      expect(ok.code).toBe(0);
      expect(ok.out).toMatch(
        /tls: .*relay\.crt for IP Address:127\.0\.0\.1, DNS:localhost, valid until/,
      );
    },
  );
});
