/**
 * The generic HTTPS JSON lookup: the URL template's rules, and the connector against an in-house
 * JSON service on 127.0.0.1 (HTTPS with the test CA, through the app's one transport) that answers
 * the way such services do, and the ways they go wrong.
 */
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GenericJsonConnector, type GenericLookupConfig } from '../../src-main/core/crm/generic.ts';
import { CrmLookup } from '../../src-main/core/crm/lookup.ts';
import {
  fieldMappingOk,
  fillLookupTemplate,
  lookupTemplateProblem,
  pickField,
} from '../../src-main/core/crm/template.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { certToolsAvailable, makeTestCa, type CertFiles, type TestCa } from '../../rigs/certs.ts';

describe('lookup URL templates', () => {
  it('accept placeholders only as query values of an https address', () => {
    expect(lookupTemplateProblem('https://crm.example.com/api/lookup?phone={number}')).toBeNull();
    expect(lookupTemplateProblem('https://crm.example.com/find?q=tel:{digits}&x=1')).toBeNull();
    expect(lookupTemplateProblem('http://crm.example.com/?phone={number}')).toBe('not-https');
    expect(lookupTemplateProblem('https://crm.example.com/{number}')).toBe(
      'placeholder-outside-query',
    );
    expect(lookupTemplateProblem('https://{number}.example.com/?a=1')).toBe(
      'placeholder-outside-query',
    );
    expect(lookupTemplateProblem('https://crm.example.com/?{number}=1')).toBe(
      'placeholder-outside-query',
    );
    expect(lookupTemplateProblem('https://crm.example.com/#{number}')).toBe(
      'placeholder-outside-query',
    );
    expect(lookupTemplateProblem('https://u:p@crm.example.com/?p={number}')).toBe('credentials');
    expect(lookupTemplateProblem('https://crm.example.com/?p={from}')).toBe('unknown-placeholder');
    expect(lookupTemplateProblem('https://crm.example.com/?p=1')).toBe('no-placeholder');
    expect(lookupTemplateProblem('')).toBe('empty');
    expect(lookupTemplateProblem('crm.example.com/?p={number}')).toBe('not-a-url');
  });

  it('encode each value, so a number cannot add a parameter or leave the query', () => {
    const url = fillLookupTemplate('https://crm.example.com/lookup?phone={number}&d={digits}', {
      number: '+1 415&admin=1#x',
      digits: '../../etc',
    });
    expect(url).toBe(
      'https://crm.example.com/lookup?phone=%2B1%20415%26admin%3D1%23x&d=..%2F..%2Fetc',
    );
    expect(new URL(url ?? '').searchParams.get('admin')).toBeNull();
  });

  it('map fields by path, own properties only', () => {
    const answer = JSON.parse(
      '{"data":{"contacts":[{"first":"Ada","last":"Lovelace","org":{"name":"AE"},"id":42}]},"__proto__":{"polluted":"yes"}}',
    );
    expect(pickField(answer, 'data.contacts[0].first data.contacts.0.last')).toBe('Ada Lovelace');
    expect(pickField(answer, 'data.contacts.0.org.name')).toBe('AE');
    expect(pickField(answer, 'data.contacts.0.id')).toBe('42');
    expect(pickField(answer, 'data.contacts.0.org')).toBe(''); // an object is not text
    expect(pickField(answer, 'polluted')).toBe('');
    expect(pickField({}, 'constructor.name')).toBe('');
    expect(fieldMappingOk('data.contacts[0].name')).toBe(true);
    expect(fieldMappingOk('a b c d e')).toBe(false);
    expect(fieldMappingOk('a..b')).toBe(false);
    expect(fieldMappingOk('a/b')).toBe(false);
  });
});

const canRun = certToolsAvailable('test/crm/generic.test.ts');

interface Seen {
  url: string;
  authorization: string | undefined;
}

describe.skipIf(!canRun)('generic HTTPS JSON lookup', () => {
  let ca: TestCa;
  let cert: CertFiles;
  let dir = '';
  let server: https.Server;
  let base = '';
  const seen: Seen[] = [];
  let handler: (url: URL, res: ServerResponse) => void = (_u, res) => res.end();
  const lookups: CrmLookup[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-generic-'));
    ca = makeTestCa(dir);
    cert = ca.issue('crm');
    server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      handler(url, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    seen.length = 0;
    for (const l of lookups.splice(0)) l.close();
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  function json(res: ServerResponse, status: number, body: unknown, headers = {}) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  function lookupWith(
    config: Partial<GenericLookupConfig>,
    secret: string | null = 's3cr3t-token',
  ) {
    const secrets = new SecretRegistry();
    const transport = transportFor(
      { proxyMode: 'none', proxyUrl: '', caFile: ca.caFile },
      { logger: silentLogger, secrets, readFile: (p) => readFileSync(p, 'utf8') },
    );
    const connector = new GenericJsonConnector({
      config: {
        urlTemplate: `${base}/api/callers?phone={number}&national={digits}`,
        auth: 'bearer',
        nameField: 'name',
        companyField: 'company',
        recordUrlField: 'url',
        ...config,
      },
      fetch: transport.fetch,
      clock: systemClock,
      secrets,
      secret: async () => secret,
    });
    const lookup = new CrmLookup({
      clock: systemClock,
      logger: silentLogger,
      connector,
      region: () => 'US',
      allowedSchemes: () => ['https'],
    });
    lookups.push(lookup);
    return { lookup, secrets };
  }

  it('asks with the number as encoded query values and the bearer token, and maps the answer', async () => {
    handler = (url, res) =>
      url.searchParams.get('phone') === '+14155550123'
        ? json(res, 200, {
            name: 'Ada Lovelace',
            company: 'AE',
            url: 'https://crm.example.com/c/7',
          })
        : json(res, 404, { error: 'not found' });
    const { lookup } = lookupWith({});
    expect(await lookup.lookup('(415) 555-0123')).toEqual({
      status: 'found',
      name: 'Ada Lovelace',
      company: 'AE',
      recordUrl: 'https://crm.example.com/c/7',
      cached: false,
    });
    expect(seen[0]).toEqual({
      url: '/api/callers?phone=%2B14155550123&national=4155550123',
      authorization: 'Bearer s3cr3t-token',
    });
    expect(await lookup.lookup('+14155550199')).toEqual({ status: 'not-found', cached: false });
  });

  it('sends Basic credentials from the keychain and registers them as secrets', async () => {
    handler = (_u, res) => json(res, 200, { results: [{ display: 'Grace Hopper' }] });
    const { lookup, secrets } = lookupWith(
      { auth: 'basic', nameField: 'results.0.display', companyField: '', recordUrlField: '' },
      'frontdesk:pa55word',
    );
    expect(await lookup.lookup('+14155550123')).toMatchObject({
      name: 'Grace Hopper',
      company: null,
    });
    const basic = Buffer.from('frontdesk:pa55word').toString('base64');
    expect(seen[0]?.authorization).toBe(`Basic ${basic}`);
    expect(secrets.scrub(`x ${basic} frontdesk:pa55word`)).not.toContain('pa55word');
  });

  it('reads an answer without a name as "no one", and says what went wrong otherwise', async () => {
    const cases: Array<[(res: ServerResponse) => void, object]> = [
      [(res) => json(res, 200, { name: '' }), { status: 'not-found' }],
      [(res) => json(res, 200, []), { status: 'not-found' }],
      [(res) => res.end('<html>login</html>'), { status: 'failed', kind: 'bad-answer' }],
      [
        (res) => {
          res.writeHead(302, { location: 'https://attacker.example/steal' });
          res.end();
        },
        { status: 'failed', kind: 'bad-answer' },
      ],
      [
        (res) => json(res, 200, { name: 'x'.repeat(300_000) }),
        { status: 'failed', kind: 'bad-answer' },
      ],
      [(res) => json(res, 401, {}), { status: 'failed', kind: 'auth' }],
    ];
    for (const [i, [answer, expected]] of cases.entries()) {
      handler = (_u, res) => answer(res);
      const { lookup } = lookupWith({});
      expect(await lookup.lookup(`+1415555010${i}`), `case ${i}`).toMatchObject(expected);
    }
    // The redirect was not followed.
    expect(seen.every((s) => s.url.startsWith('/api/callers'))).toBe(true);
  });

  it('pauses for the Retry-After of a 429, and says so when no token is stored', async () => {
    handler = (_u, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '120' });
    const { lookup } = lookupWith({});
    expect(await lookup.lookup('+14155550123')).toEqual({ status: 'failed', kind: 'rate-limited' });
    const paused = lookup.stats().pausedUntil ?? 0;
    expect(paused - Date.now()).toBeGreaterThan(110_000);
    expect(await lookup.lookup('+14155550124')).toEqual({ status: 'skipped', reason: 'paused' });
    expect(seen).toHaveLength(1);
    const { lookup: noToken } = lookupWith({}, null);
    expect(await noToken.lookup('+14155550123')).toEqual({
      status: 'failed',
      kind: 'no-credentials',
    });
    expect(seen).toHaveLength(1);
  });
});
