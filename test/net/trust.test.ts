import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretRegistry, silentLogger } from '../../src-shared/log.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { loadTrust } from '../../src-main/core/net/trust.ts';
import { applyPatch } from '../../src-main/core/settings/validate-settings.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { certToolsAvailable, makeTestCa, type TestCa } from '../support/certs.ts';

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
