import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { decodeControl } from '../../src-shared/relay/relay-protocol.ts';
import { loadConfig } from '../../src-relay/config-env.ts';
import { startRelay } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import {
  SECRET,
  TestClient,
  envelope,
  postWebhook,
  relayConfig,
  signed,
  startTokenService,
} from '../../rigs/relay/helpers.ts';
import { waitFor } from '../../rigs/wait.ts';
import { relayEntry, runRelayCli } from '../../rigs/relay/relay-process.ts';

describe('config', () => {
  it('merges the file with environment overrides and refuses unsafe settings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-config-'));
    try {
      const file = join(dir, 'relay.json');
      writeFileSync(
        file,
        JSON.stringify({
          port: 9000,
          tenants: { 'acme-eu': { baseUrl: 'https://acme.example', secrets: ['from-file'] } },
          retention: { maxEvents: 10 },
        }),
      );
      const config = loadConfig(file, {
        RELAY_PORT: '9100',
        RELAY_TENANT_ACME_EU_SECRETS: 'new-1, new-2',
        RELAY_REDIS_URL: 'redis://10.0.0.1:6379',
      });
      expect(config.port).toBe(9100);
      expect(config.tenants['acme-eu']!.secrets).toEqual(['new-1', 'new-2']);
      expect(config.retention).toMatchObject({ maxEvents: 10, dedupeTtlMs: 25 * 3600_000 });
      expect(config.storage).toEqual({
        kind: 'redis',
        url: 'redis://10.0.0.1:6379',
        commandTimeoutMs: 2000,
        minReplicas: 0,
        replicaTimeoutMs: 1000,
        upstreamLeaseMs: 10_000,
      });
      expect(() => loadConfig(file, { RELAY_TENANT_ACME_EU_SECRETS: '' })).toThrow(
        /no webhook secrets/,
      );
      writeFileSync(
        file,
        JSON.stringify({
          tenants: { acme: { baseUrl: 'https://a.example', secrets: ['s'] } },
          retention: { dedupeTtlMs: 3600_000 },
        }),
      );
      expect(() => loadConfig(file, {})).toThrow(/25 hours/);
      expect(() => loadConfig(undefined, {})).toThrow(/no tenants/);
      const tenantEnv = {
        RELAY_TENANT_ACME_SECRETS: 's',
        RELAY_TENANT_ACME_BASE_URL: 'https://a.example',
      };
      expect(loadConfig(undefined, { ...tenantEnv, RELAY_LOG_LEVEL: 'warn' }).logLevel).toBe(
        'warn',
      );
      expect(() => loadConfig(undefined, { ...tenantEnv, RELAY_LOG_LEVEL: 'verbose' })).toThrow(
        /logLevel/,
      );
      // A misspelt backend must not quietly become the memory store (not shared, not durable).
      writeFileSync(file, JSON.stringify({ storage: { kind: 'Redis', url: 'redis://r:6379' } }));
      expect(() => loadConfig(file, tenantEnv)).toThrow(/storage.kind/);
      writeFileSync(file, JSON.stringify({ storage: { kind: 'redis' } }));
      expect(() => loadConfig(file, tenantEnv)).toThrow(/storage.url/);
      // A misspelt setting is refused by name rather than ignored.
      writeFileSync(file, JSON.stringify({ clients: { maxBufferBytes: 1 } }));
      expect(() => loadConfig(file, tenantEnv)).toThrow(
        /clients\.maxBufferBytes: not a relay setting/,
      );
      writeFileSync(file, JSON.stringify({ clients: { idleTimeoutMs: '60s' } }));
      expect(() => loadConfig(file, tenantEnv)).toThrow(/clients\.idleTimeoutMs: must be a number/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("single sign-on's explicit mapping takes extensions by the one rule (1 to 7 digits), as Settings and `relay users`", () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-config-'));
    try {
      const file = join(dir, 'relay.json');
      const withMapping = (extensions: string[], dids: string[] = []) =>
        writeFileSync(
          file,
          JSON.stringify({
            users: { file: join(dir, 'users.json') },
            tenants: {
              acme: {
                baseUrl: 'https://a.example',
                secrets: ['s'],
                access: 'users',
                oidc: {
                  issuer: 'https://login.example.org',
                  clientId: 'screenpop',
                  users: { 'bob@example.org': { extensions, dids } },
                },
              },
            },
          }),
        );
      withMapping(['1234567']);
      expect(loadConfig(file, {}).tenants.acme!.oidc!.users['bob@example.org']!.extensions).toEqual(
        ['1234567'],
      );
      // Eight digits are a telephone number everywhere else (Settings would never match them).
      withMapping(['12345678']);
      expect(() => loadConfig(file, {})).toThrow(/an extension is 1 to 7 digits/);
      withMapping(['10a']);
      expect(() => loadConfig(file, {})).toThrow(/an extension is 1 to 7 digits/);
      // A DID is the full international number (matched exactly in organisation mode).
      withMapping(['101'], ['+49 30 555 0002']);
      expect(loadConfig(file, {}).tenants.acme!.oidc!.users['bob@example.org']!.dids).toEqual([
        '+49 30 555 0002',
      ]);
      withMapping(['101'], ['555 0100']);
      expect(() => loadConfig(file, {})).toThrow(/a DID is the full international number/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a config file that is not JSON by position, never quoting it (it holds secrets)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-config-'));
    try {
      const file = join(dir, 'relay.json');
      writeFileSync(
        file,
        // The secret written without its quotes: V8's error would quote the text around it.
        '{"tenants": {"acme": {"baseUrl": "https://a.example", "secrets": [whsec-very-secret-1]}}}',
      );
      let message = '';
      try {
        loadConfig(file, {});
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/is not valid JSON/);
      expect(message).not.toMatch(/whsec/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('logs', () => {
  it('never carry secrets, signatures, tokens or bodies', async () => {
    const service = await startTokenService(new Set(['token-that-must-not-leak']));
    const secrets = new SecretRegistry();
    secrets.add(SECRET);
    const logger = memoryLogger(secrets);
    const store = new MemoryStore({ clock: systemClock });
    const relay = await startRelay({
      config: relayConfig({ acme: { baseUrl: service.baseUrl, secrets: [SECRET] } }),
      store,
      logger,
    });
    try {
      const client = await TestClient.connect(relay.clientUrl('acme'), 'token-that-must-not-leak', {
        extensions: ['101'],
      });
      const body = envelope({ event_id: 'log-1', from: '+15551234567-caller-secret-name' });
      await postWebhook(relay.webhookUrl('acme'), body, signed(body));
      await postWebhook(relay.webhookUrl('acme'), body, 'sha256=' + 'f'.repeat(64));
      await client.until(() => client.events.length === 1);
      await client.close();
      const text = JSON.stringify(logger.records);
      expect(logger.records.length).toBeGreaterThan(2);
      for (const needle of [
        SECRET,
        'token-that-must-not-leak',
        'caller-secret-name',
        'f'.repeat(64),
        signed(body).slice(7),
      ])
        expect(text).not.toContain(needle);
    } finally {
      await relay.close();
      await store.close();
      await service.close();
    }
  });
});

// The certificate is made with the openssl CLI (present on Debian images with ca-certificates).
const haveOpenssl = ['/usr/bin/openssl', '/bin/openssl'].some((p) => existsSync(p));
if (!haveOpenssl) console.warn('TLS test skipped: openssl is not installed');

describe.skipIf(!haveOpenssl)('TLS', () => {
  it('serves HTTPS and WSS from certificate files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-tls-'));
    const service = await startTokenService(new Set(['tok']));
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const ca = readFileSync(certFile);
    const store = new MemoryStore({ clock: systemClock });
    const relay = await startRelay({
      config: relayConfig(
        { acme: { baseUrl: service.baseUrl, secrets: [SECRET] } },
        { tls: { certFile, keyFile } },
      ),
      store,
    });
    try {
      expect(relay.url).toMatch(/^https:/);
      const ws = new WebSocket(relay.clientUrl('acme'), {
        headers: { Authorization: 'Bearer tok' },
        ca,
      });
      const frames: string[] = [];
      ws.on('message', (d) => frames.push(d.toString()));
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      ws.send(
        JSON.stringify({ type: 'hello', v: 1, filter: { extensions: ['101'] }, cursor: null }),
      );
      // Live from `ready` on: a webhook stored before the hello is handled would be history.
      await waitFor(() => frames.some((f) => decodeControl(f)?.type === 'ready'), 'ready', {
        timeoutMs: 5000,
      });
      const body = envelope({ event_id: 'tls-1' });
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          relay.webhookUrl('acme'),
          {
            method: 'POST',
            ca,
            headers: { 'Content-Type': 'application/json', 'X-Service-Signature': signed(body) },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(status).toBe(200);
      await waitFor(() => frames.includes(body), 'the event over wss', { timeoutMs: 5000 });
      ws.terminate();
    } finally {
      await relay.close();
      await store.close();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the command line', () => {
  const run = (args: string[]) => runRelayCli(args);

  it('prints its usage for --help, and refuses an unknown option with exit 2', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/usage: npm run relay -- \[--config <relay.json>\]/);
    const bad = await run(['--confg', 'relay.json']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/Unknown option '--confg'/);
    expect(bad.err).toMatch(/usage:/);
  });

  it('takes -c <file>, and a config that does not hold exits 1 naming the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-cli-'));
    try {
      const file = join(dir, 'relay.json');
      writeFileSync(
        file,
        JSON.stringify({
          tenants: { acme: { baseUrl: 'https://a.example', secrets: ['s'] } },
          clients: { idleTimeoutMs: -5 },
        }),
      );
      const r = await run(['-c', file]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/relay config: clients\.idleTimeoutMs: must be more than 0/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run relay (the CLI process)', () => {
  let service: Awaited<ReturnType<typeof startTokenService>>;
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    service = await startTokenService(new Set(['tok']));
    child = spawn(process.execPath, [relayEntry()], {
      env: {
        ...process.env,
        RELAY_PORT: '0',
        RELAY_LOG_LEVEL: 'warn',
        RELAY_TENANT_ACME_SECRETS: SECRET,
        RELAY_TENANT_ACME_BASE_URL: service.baseUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /relay listening on (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`relay exited ${code}`)));
    });
  });
  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await service.close();
  });

  it('on SIGTERM finishes the webhook in flight, delivers it, closes clients with 1012 and exits 0', async () => {
    const client = await TestClient.connect(url.replace('http', 'ws') + '/v1/stream/acme', 'tok', {
      extensions: ['101'],
    });
    const body = envelope({ event_id: 'in-flight-1' });
    // A webhook whose body is still arriving when the signal comes.
    const answer = new Promise<number>((resolve, reject) => {
      const req = http.request(
        url + '/webhook/acme',
        {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
            'X-Service-Signature': signed(body),
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 20));
      setTimeout(() => {
        child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(20)), 150);
      }, 100);
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    expect(await answer).toBe(200);
    await client.until(() => client.closeCode !== null, 5000);
    expect(client.eventIds()).toEqual(['in-flight-1']);
    expect(client.closeCode).toBe(1012);
    expect(await exited).toBe(0);
    // Nothing new is accepted once it stopped.
    await expect(postWebhook(url + '/webhook/acme', body, signed(body))).rejects.toThrow();
  });
});
