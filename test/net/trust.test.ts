import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { lazyTrust, type TrustInput } from '../../src-shared/net/trust.ts';

/** Everything at once: the CA file, Node's roots and the system store. */
const loadTrust = (input: TrustInput) => lazyTrust(input).get();
import { applyPatch } from '../../src-main/core/settings/validate-settings.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { certToolsAvailable, makeTestCa, type TestCa } from '../../rigs/certs.ts';

const read = (path: string) => readFileSync(path, 'utf8');
const run = certToolsAvailable(import.meta.filename);

describe('the trusted certificate authorities', () => {
  it('add the system store where this Node can read it, and say so', () => {
    const calls: string[] = [];
    const trust = loadTrust({
      caFile: '',
      readFile: read,
      extraCaCertsVariable: undefined,
      getCACertificates: (type) => {
        calls.push(type);
        return type === 'system' ? ['SYSTEM-PEM'] : ['DEFAULT-PEM'];
      },
    });
    expect(trust.ca).toEqual(['DEFAULT-PEM', 'SYSTEM-PEM']);
    expect(trust.decisions[0]).toContain('the system store (1)');
    expect(trust.decisions[1]).toBe('NODE_EXTRA_CA_CERTS: not set');
    const old = loadTrust({ caFile: '', readFile: read, getCACertificates: undefined });
    expect(old.ca).toBeUndefined();
    expect(old.decisions[0]).toContain('cannot read the system store');
  });

  it('say whether NODE_EXTRA_CA_CERTS was used: a packaged app (nodeOptions fuse off) ignores it', () => {
    const node = (extra: string[]) => (type: string) =>
      type === 'default' ? ['ROOT', ...extra] : type === 'extra' ? extra : [];
    const used = loadTrust({
      caFile: '',
      readFile: read,
      extraCaCertsVariable: '/etc/corp-ca.pem',
      getCACertificates: node(['CORP']),
    });
    expect(used.decisions).toEqual([
      "trust: Node's roots (1), the system store (0)",
      'NODE_EXTRA_CA_CERTS: /etc/corp-ca.pem (1 certificate)',
      'CA file: none',
    ]);
    const ignored = loadTrust({
      caFile: '',
      readFile: read,
      extraCaCertsVariable: '/etc/corp-ca.pem',
      getCACertificates: node([]),
    });
    expect(ignored.decisions[1]).toBe(
      'NODE_EXTRA_CA_CERTS: /etc/corp-ca.pem is set but not used (a packaged Screenpop ignores it; use the caFile setting)',
    );
  });

  it('name a CA file that cannot be used, and keep the rest', () => {
    const missing = loadTrust({ caFile: '/nonexistent/ca.pem', readFile: read });
    expect(missing.problem).toBe('The CA file /nonexistent/ca.pem cannot be read (ENOENT).');
    expect(missing.ca?.length ?? 0).toBeGreaterThan(0);
    const notPem = loadTrust({ caFile: '/x.pem', readFile: () => 'hello' });
    expect(notPem.problem).toMatch(/holds no PEM certificate/);
  });
});

describe('lazyTrust: the CA file now, the system store on first use', () => {
  it('reads the CA file when made, the store at the first get() only, and keeps the result', () => {
    const stores: string[] = [];
    const files: string[] = [];
    const trust = lazyTrust({
      caFile: '/etc/corp-ca.pem',
      readFile: (path) => {
        files.push(path);
        return 'no certificate here';
      },
      extraCaCertsVariable: undefined,
      getCACertificates: (type) => {
        stores.push(type);
        return type === 'system' ? ['SYSTEM-PEM'] : ['DEFAULT-PEM'];
      },
    });
    // The administrator's file is judged at once (a start-up warning), the store is not read.
    expect(files).toEqual(['/etc/corp-ca.pem']);
    expect(trust.problem).toMatch(/CA file \/etc\/corp-ca.pem holds no PEM certificate/);
    expect(trust.caFile).toBe(`CA file: ${trust.problem}`);
    expect(stores).toEqual([]);
    expect(trust.loaded).toBe(false);
    const first = trust.get();
    expect(stores).toEqual(['default', 'system', 'extra']);
    expect(trust.loaded).toBe(true);
    expect(first.ca).toEqual(['DEFAULT-PEM', 'SYSTEM-PEM']);
    expect(first.problem).toBe(trust.problem);
    expect(first.decisions.at(-1)).toBe(trust.caFile);
    expect(trust.get()).toBe(first);
    expect(stores).toHaveLength(3);
    expect(files).toHaveLength(1);
  });
});

describe('settings: proxy and CA file', () => {
  it('take an http proxy address without credentials, and a full path', () => {
    const ok = applyPatch(DEFAULT_SETTINGS, {
      proxyMode: 'manual',
      proxyUrl: 'http://proxy.corp:3128/',
      caFile: '/etc/screenpop/ca.pem',
    });
    expect(ok.ok && ok.settings).toMatchObject({ proxyUrl: 'http://proxy.corp:3128' });
    const withPassword = applyPatch(DEFAULT_SETTINGS, { proxyUrl: 'http://u:hunter22@p:1' });
    expect(withPassword).toMatchObject({ ok: false, field: 'proxyUrl' });
    expect(JSON.stringify(withPassword)).not.toContain('hunter22');
    expect(applyPatch(DEFAULT_SETTINGS, { caFile: 'relative.pem' })).toMatchObject({
      ok: false,
      field: 'caFile',
    });
  });
});

describe.runIf(run)('the transport against a server of a private CA', () => {
  let dir: string;
  let ca: TestCa;
  let server: https.Server;
  let url: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'trust-test-'));
    ca = makeTestCa(dir);
    const { cert, key } = ca.issue('server');
    server = https.createServer({ cert, key }, (_req, res) => res.end('{"errcode":0}'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    rmSync(dir, { recursive: true, force: true });
  });

  const transport = (caFile: string) =>
    transportFor(
      { proxyMode: 'none', proxyUrl: '', caFile },
      { logger: silentLogger, secrets: new SecretRegistry(), readFile: read },
    );

  it('warns of a bad CA file at start; reads the store and logs the trust at the first TLS connection', async () => {
    const logger = memoryLogger();
    const made = (caFile: string) =>
      transportFor(
        { proxyMode: 'none', proxyUrl: '', caFile },
        { logger, secrets: new SecretRegistry(), readFile: read },
      );
    made(join(dir, 'missing.pem'));
    expect(logger.records.map((r) => [r.level, r.msg])).toEqual([
      ['warn', 'the CA file is not used'],
      ['info', 'network'],
    ]);
    expect(logger.records[0]!.problem).toMatch(/missing\.pem cannot be read \(ENOENT\)/);
    logger.records.length = 0;
    const trusted = made(ca.caFile);
    expect(logger.records.map((r) => r.msg)).toEqual(['network']);
    expect(logger.records[0]!.caFile).toBe(`CA file: ${ca.caFile} (1 certificate)`);
    for (let i = 0; i < 2; i++)
      expect(await (await trusted.fetch(url)).text()).toBe('{"errcode":0}');
    const trustLines = logger.records.filter((r) => r.msg === 'trust');
    expect(trustLines).toHaveLength(1);
    expect(trustLines[0]!.decisions).toContain(`CA file: ${ca.caFile} (1 certificate)`);
    expect(trusted.decisions().trust).toEqual(trustLines[0]!.decisions);
  });

  it('is trusted with the CA file, refused without it', async () => {
    const trusted = transport(ca.caFile);
    expect(await (await trusted.fetch(url)).text()).toBe('{"errcode":0}');
    expect(trusted.decisions()).toMatchObject({
      proxySource: 'none (proxy setting: none)',
      routes: { [`https://${new URL(url).host}`]: 'direct' },
    });
    const error = await transport('')
      .fetch(url)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe(
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    );
  });
});
