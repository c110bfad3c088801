/**
 * The HubSpot connector and the lookup service against the fake HubSpot (test/support/fake-hubspot.ts,
 * built from HubSpot's API reference) over real HTTPS on 127.0.0.1, reached through the app's one
 * transport trusting the test CA as an administrator's CA file, once through a real proxy
 * (tinyproxy). Real clock throughout (real sockets); no timing is asserted beyond "answered".
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CrmLookup } from '../../src-main/core/crm/lookup.ts';
import { HubSpotConnector } from '../../src-main/core/crm/hubspot.ts';
import { describeTest } from '../../src-main/core/crm/test-lookup.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { PLAIN_ENGLISH } from '../../src-shared/i18n/locale-state.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import {
  createLogger,
  SecretRegistry,
  silentLogger,
  type LogRecord,
} from '../../src-shared/process/log.ts';
import { certToolsAvailable, makeTestCa, type CertFiles, type TestCa } from '../../rigs/certs.ts';
import { startFakeHubSpot, type FakeHubSpot } from '../../rigs/fake-hubspot.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForwardProxy, tinyproxyAvailable } from '../blackbox/forward-proxy.ts';
import { ProcessGroup } from '../../rigs/processes.ts';

const canRun = certToolsAvailable('test/crm/hubspot.test.ts');
const TOKEN = 'pat-na1-0f1e2d3c-test';

let ca: TestCa;
let server: CertFiles;
const fakes: FakeHubSpot[] = [];
const lookups: CrmLookup[] = [];

let caDir = '';
beforeAll(() => {
  if (!canRun) return;
  caDir = mkdtempSync(join(tmpdir(), 'crm-ca-'));
  ca = makeTestCa(caDir);
  server = ca.issue('hubspot');
});
afterAll(() => {
  if (caDir) rmSync(caDir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const l of lookups.splice(0)) l.close();
  for (const f of fakes.splice(0)) await f.close();
});

async function hubspot(
  options: {
    tokens?: Record<string, string[]>;
    uiDomain?: string;
    searchPerSecond?: number;
    dailyLimit?: number;
    limitShape?: 'category' | 'policy';
    cert?: CertFiles;
    defaultCountry?: 'US' | 'IT' | 'GB';
  } = {},
) {
  const fake = await startFakeHubSpot({
    cert: (options.cert ?? server).cert,
    key: (options.cert ?? server).key,
    ...(options.searchPerSecond ? { searchPerSecond: options.searchPerSecond } : {}),
    tokens: options.tokens ?? { [TOKEN]: ['crm.objects.contacts.read'] },
    ...(options.uiDomain ? { uiDomain: options.uiDomain } : {}),
    ...(options.defaultCountry ? { defaultCountry: options.defaultCountry } : {}),
    ...(options.dailyLimit ? { dailyLimit: options.dailyLimit } : {}),
    ...(options.limitShape ? { limitShape: options.limitShape } : {}),
  });
  fakes.push(fake);
  return fake;
}

function lookupFor(
  fake: FakeHubSpot,
  options: {
    token?: string | null;
    timeoutMs?: number;
    proxyUrl?: string;
    logger?: ReturnType<typeof createLogger>;
    secrets?: SecretRegistry;
    region?: string;
  } = {},
) {
  const secrets = options.secrets ?? new SecretRegistry();
  const transport = transportFor(
    {
      proxyMode: options.proxyUrl ? 'manual' : 'none',
      proxyUrl: options.proxyUrl ?? '',
      caFile: ca.caFile,
    },
    { logger: silentLogger, secrets, readFile: (p) => readFileSync(p, 'utf8') },
  );
  const connector = new HubSpotConnector({
    fetch: transport.fetch,
    clock: systemClock,
    secrets,
    token: async () => (options.token === undefined ? TOKEN : options.token),
    apiBase: fake.url,
  });
  const lookup = new CrmLookup({
    clock: systemClock,
    logger: options.logger ?? silentLogger,
    connector,
    region: () => options.region ?? 'US',
    allowedSchemes: () => ['https'],
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  lookups.push(lookup);
  return lookup;
}

describe.skipIf(!canRun)('HubSpot lookup', () => {
  it('asks the search API as HubSpot documents it and names the caller with a link to the record', async () => {
    const fake = await hubspot();
    // Stored as a person typed it: found through HubSpot's calculated searchable number.
    const ada = fake.addContact({
      firstname: 'Ada',
      lastname: 'Lovelace',
      company: 'Analytical Engines',
      phone: '(415) 555-0123',
    });
    const lookup = lookupFor(fake);
    expect(await lookup.lookup('+14155550123')).toEqual({
      status: 'found',
      name: 'Ada Lovelace',
      company: 'Analytical Engines',
      recordUrl: `https://app.hubspot.com/contacts/20251122/record/0-1/${ada.id}`,
      // The contact's id, for the call log's association (issue 39).
      contactId: ada.id,
      cached: false,
    });
    expect(fake.searches).toHaveLength(1);
    // HubSpot's dated API version: the numeric v1-v3 paths are unsupported from September 2027.
    expect(fake.searches[0]?.path).toBe('/crm/objects/2026-09/contacts/search');
    expect(fake.searches[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(fake.searches[0]?.body).toEqual({
      filterGroups: [
        { filters: [{ propertyName: 'phone', operator: 'EQ', value: '+14155550123' }] },
        { filters: [{ propertyName: 'mobilephone', operator: 'EQ', value: '+14155550123' }] },
        {
          filters: [
            {
              propertyName: 'hs_searchable_calculated_phone_number',
              operator: 'EQ',
              value: '4155550123',
            },
          ],
        },
        {
          filters: [
            {
              propertyName: 'hs_searchable_calculated_mobile_number',
              operator: 'EQ',
              value: '4155550123',
            },
          ],
        },
      ],
      properties: [
        'firstname',
        'lastname',
        'company',
        'phone',
        'hs_calculated_phone_number',
        'mobilephone',
        'hs_calculated_mobile_number',
      ],
      sorts: [{ propertyName: 'lastmodifieddate', direction: 'DESCENDING' }],
      limit: 10,
    });
    // The same caller again (or another number of the same account): the account is asked once.
    expect(await lookup.lookup('(415) 555-0123')).toMatchObject({ status: 'found', cached: true });
    fake.addContact({ firstname: 'Grace', lastname: 'Hopper', mobilephone: '+12125550104' });
    expect(await lookup.lookup('+1 212 555 0104')).toMatchObject({ name: 'Grace Hopper' });
    expect(fake.searches).toHaveLength(2);
    expect(fake.accountRequests).toBe(1);
  });

  it('connects with a service key as a new customer makes one, and with an existing private app token', async () => {
    // HubSpot no longer lets accounts create private apps (October 2026); service keys replace
    // them. Both are sent as a bearer token with the scope crm.objects.contacts.read.
    const SERVICE_KEY = 'service-key-test-0f1e'; // its format is not in what we read of HubSpot's pages;
    const fake = await hubspot({
      tokens: {
        [SERVICE_KEY]: ['crm.objects.contacts.read'],
        [TOKEN]: ['crm.objects.contacts.read'],
      },
    });
    fake.addContact({ firstname: 'Ada', phone: '+14155550123' });
    for (const token of [SERVICE_KEY, TOKEN])
      expect(await lookupFor(fake, { token }).lookup('+14155550123'), token).toMatchObject({
        status: 'found',
        name: 'Ada',
      });
    expect(fake.searches.map((s) => s.authorization)).toEqual([
      `Bearer ${SERVICE_KEY}`,
      `Bearer ${TOKEN}`,
    ]);
    expect(fake.searches.every((s) => s.path === '/crm/objects/2026-09/contacts/search')).toBe(
      true,
    );
  });

  it('takes the most recently changed of several matches, never pages on, and remembers who is unknown', async () => {
    const fake = await hubspot();
    for (let i = 0; i < 12; i++)
      fake.addContact({ firstname: `Old${i}`, phone: '+14155550123' }, Date.now() - 86_400_000);
    fake.addContact({ firstname: 'Newest', phone: '+14155550123' }, Date.now());
    const lookup = lookupFor(fake);
    expect(await lookup.lookup('+14155550123')).toMatchObject({ name: 'Newest' });
    expect(fake.searches).toHaveLength(1); // 13 matches, one page of 10: no second request
    expect(await lookup.lookup('+14155559999')).toEqual({ status: 'not-found', cached: false });
    expect(await lookup.lookup('+14155559999')).toEqual({ status: 'not-found', cached: true });
    expect(fake.searches).toHaveLength(2);
    expect(lookup.stats()).toMatchObject({ lookups: 2, found: 1, notFound: 1, cacheHits: 1 });
  });

  it('stops asking after a refused token (401) or a missing scope (403), without logging the token', async () => {
    const records: LogRecord[] = [];
    const secrets = new SecretRegistry();
    const logger = createLogger({ secrets, sink: (r) => records.push(r) });
    const fake = await hubspot({ tokens: { 'pat-na1-noscope': ['crm.objects.companies.read'] } });
    const refused = lookupFor(fake, { token: 'pat-na1-wrong', logger, secrets });
    expect(await refused.lookup('+14155550123')).toEqual({ status: 'failed', kind: 'auth' });
    expect(await refused.lookup('+14155550124')).toEqual({ status: 'skipped', reason: 'refused' });
    expect(fake.searches).toHaveLength(1);
    const noScope = lookupFor(fake, { token: 'pat-na1-noscope', logger, secrets });
    expect(await noScope.lookup('+14155550123')).toEqual({ status: 'failed', kind: 'forbidden' });
    const none = lookupFor(fake, { token: null });
    expect(await none.lookup('+14155550123')).toEqual({
      status: 'failed',
      kind: 'no-credentials',
    });
    const logged = JSON.stringify(records);
    expect(logged).not.toContain('pat-na1-wrong');
    expect(logged).not.toContain('pat-na1-noscope');
    expect(logged).not.toContain('4155550123');
  });

  it("finds numbers stored as people type them, in the account's country or with a country code", async () => {
    // More lookups in a second than HubSpot's search limit allows: this test is about numbers.
    const fake = await hubspot({ searchPerSecond: 20 });
    fake.addContact({ firstname: 'Ada', phone: '(415) 555-0123' });
    fake.addContact({ firstname: 'Bob', phone: '+1 415-555-0124' });
    fake.addContact({ firstname: 'Cy', mobilephone: '4155550125' });
    fake.addContact({ firstname: 'Basil', phone: '+44 20 7946 0958' });
    // An Italian landline keeps its leading 0 after the country code (+39 06…).
    fake.addContact({ firstname: 'Giulia', phone: '+39 06 6982 1234' });
    const lookup = lookupFor(fake);
    for (const [caller, name] of [
      ['+14155550123', 'Ada'],
      ['+14155550124', 'Bob'],
      ['(415) 555-0125', 'Cy'],
      ['+442079460958', 'Basil'],
      ['+390669821234', 'Giulia'],
    ] as const)
      expect(await lookup.lookup(caller), caller).toMatchObject({ status: 'found', name });
    // An Italian account: the landline typed as Italians type it, the caller in Italy's numbering.
    const italian = await hubspot({ defaultCountry: 'IT' });
    italian.addContact({ firstname: 'Marco', phone: '06 6982 1235' });
    expect(await lookupFor(italian, { region: 'IT' }).lookup('06 6982 1235')).toMatchObject({
      status: 'found',
      name: 'Marco',
    });
  });

  it("never names a contact of another country whose national digits are the caller's", async () => {
    // +44 20 7946 0958 (London) and +1 207-946-0958 (Maine) are both 2079460958 without their
    // country codes: HubSpot's searchable calculated numbers find both.
    const fake = await hubspot();
    fake.addContact(
      { firstname: 'Basil', lastname: 'London', phone: '+44 20 7946 0958' },
      Date.now(),
    );
    // Nobody in Maine yet: the Londoner must not be named for a call from Maine.
    expect(await lookupFor(fake).lookup('+12079460958')).toEqual({
      status: 'not-found',
      cached: false,
    });
    // The Mainer, typed without a country code and changed longer ago than the Londoner.
    fake.addContact(
      { firstname: 'Maine', lastname: 'Caller', phone: '207-946-0958' },
      Date.now() - 86_400_000,
    );
    const lookup = lookupFor(fake);
    expect(await lookup.lookup('+12079460958')).toMatchObject({
      status: 'found',
      name: 'Maine Caller',
    });
    expect(await lookup.lookup('+442079460958')).toMatchObject({
      status: 'found',
      name: 'Basil London',
    });
    // A mobile number of one country and a landline of another, on the same contact's page of results.
    const mixed = await hubspot();
    mixed.addContact({ firstname: 'Other', mobilephone: '+44 20 7946 0958' }, Date.now());
    expect(await lookupFor(mixed).lookup('+12079460958')).toEqual({
      status: 'not-found',
      cached: false,
    });
  });

  it("respects HubSpot's per-second limit: a 429 pauses every lookup, then lookups resume", async () => {
    // The limit is the account's, shared with its other integrations: here one search a second.
    const fake = await hubspot({ searchPerSecond: 1 });
    fake.addContact({ firstname: 'Ada', phone: '+14155550100' });
    const lookup = lookupFor(fake);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => lookup.lookup(`+1415555010${i}`)),
    );
    const kinds = results.map((r) => (r.status === 'failed' ? r.kind : r.status));
    expect(kinds).toContain('rate-limited');
    const asked = fake.searches.length;
    // Paused: nothing reaches HubSpot until the second is over.
    expect(await lookup.lookup('+14155550199')).toEqual({ status: 'skipped', reason: 'paused' });
    expect(fake.searches).toHaveLength(asked);
    expect(lookup.stats().pausedUntil).not.toBeNull();
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await lookup.lookup('+14155550100')).toMatchObject({ status: 'found', name: 'Ada' });
  });

  it("shares the per-second limit with the account's other integrations, in either 429 shape", async () => {
    for (const limitShape of ['category', 'policy'] as const) {
      const fake = await hubspot({ limitShape });
      fake.addContact({ firstname: 'Ada', phone: '+14155550100' });
      const lookup = lookupFor(fake);
      // Another app of the same account has just spent this second's five searches.
      fake.otherIntegrationSearches(5);
      expect(await lookup.lookup('+14155550100'), limitShape).toEqual({
        status: 'failed',
        kind: 'rate-limited',
      });
      const paused = lookup.stats().pausedUntil;
      expect(paused).not.toBeNull();
      // A short pause (about the second), not the daily one.
      expect((paused ?? 0) - Date.now()).toBeLessThanOrEqual(1_000);
      expect(await lookup.lookup('+14155550101')).toEqual({ status: 'skipped', reason: 'paused' });
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await lookup.lookup('+14155550100')).toMatchObject({ status: 'found', name: 'Ada' });
    }
  });

  it('pauses an hour for the daily quota, named by policyName or only by the headers and message', async () => {
    for (const limitShape of ['category', 'policy'] as const) {
      // A quota of two searches: another integration has spent them today.
      const fake = await hubspot({ dailyLimit: 2, limitShape });
      fake.otherIntegrationSearches(2);
      const lookup = lookupFor(fake);
      const asked = Date.now();
      expect(await lookup.lookup('+14155550100'), limitShape).toEqual({
        status: 'failed',
        kind: 'rate-limited',
      });
      expect((lookup.stats().pausedUntil ?? 0) - asked, limitShape).toBeGreaterThan(59 * 60_000);
      expect(await lookup.lookup('+14155550101')).toEqual({ status: 'skipped', reason: 'paused' });
      expect(fake.searches).toHaveLength(1);
    }
  });

  it('takes a 500 whose body says RATE_LIMITS for the rate limit it is, not a HubSpot failure', async () => {
    const fake = await hubspot();
    const lookup = lookupFor(fake);
    fake.failNext(1, 'rate-limits-500');
    expect(await lookup.lookup('+14155550100')).toEqual({ status: 'failed', kind: 'rate-limited' });
    expect(lookup.stats().failures).toEqual({ 'rate-limited': 1 });
  });

  it('gives up after the time-out on a slow HubSpot', async () => {
    const fake = await hubspot();
    fake.delayMs = 2_000;
    const lookup = lookupFor(fake, { timeoutMs: 300 });
    expect(await lookup.lookup('+14155550123')).toEqual({ status: 'failed', kind: 'timeout' });
    expect(lookup.stats().latencyMs.count).toBe(0); // failures are not latency samples
  });

  it('says a dropped connection or an error page is a failure, and pauses after three in a row', async () => {
    const fake = await hubspot();
    const lookup = lookupFor(fake);
    fake.failNext(1, 'drop');
    expect(await lookup.lookup('+14155550124')).toEqual({ status: 'failed', kind: 'network' });
    fake.failNext(1, 'not-json');
    expect(await lookup.lookup('+14155550125')).toEqual({ status: 'failed', kind: 'server' });
    fake.failNext(1, 503);
    expect(await lookup.lookup('+14155550126')).toEqual({ status: 'failed', kind: 'server' });
    // Three failures in a row: the next lookups pause instead of asking a HubSpot in trouble.
    expect(await lookup.lookup('+14155550127')).toEqual({ status: 'skipped', reason: 'paused' });
    expect(fake.requests).toBe(3);
    expect(lookup.stats().failures).toEqual({ network: 1, server: 2 });
  });

  it('says a refused certificate as such (untrusted, expired), with the words and remedy of the connection', async () => {
    // Another organisation's CA (not the one given as the CA file), then an expired certificate.
    const otherDir = mkdtempSync(join(caDir, 'other-'));
    const other = makeTestCa(otherDir, 'Someone Else Root CA').issue('hubspot-other');
    const expired = ca.issue('hubspot-expired', { expired: true });
    const t = PLAIN_ENGLISH.current();
    const hubspotSettings = { ...DEFAULT_SETTINGS.crmLookup, provider: 'hubspot' as const };
    for (const [cert, fault] of [
      [other, 'certificate-untrusted'],
      [expired, 'certificate-expired'],
    ] as const) {
      const fake = await hubspot({ cert });
      const host = new URL(fake.url).host;
      const result = await lookupFor(fake).lookup('+14155550123');
      expect(result).toEqual({
        status: 'failed',
        kind: 'certificate',
        certificate: { fault, host },
      });
      expect(fake.searches).toHaveLength(0);
      const said = describeTest(result, hubspotSettings, t, 12);
      expect(said.message).toBe(t.t(`status.fault.${fault}.reason`, { host }));
      expect(said.message).toContain(host);
      expect(said.remedy).toBe(t.t(`status.fault.${fault}.remedy`, { host }));
    }
  });

  it('makes hostile answers inert and never trusts a foreign ui domain for the record link', async () => {
    const fake = await hubspot({ uiDomain: 'evil.example.com' });
    const c = fake.addContact({
      firstname: '\u202Egnp.exe\u202C <b>Mallory</b>',
      lastname: '\u0000\u001b[31m' + 'x'.repeat(5000),
      company: '=HYPERLINK("javascript:alert(1)")',
      phone: '+14155550123',
    });
    const result = await lookupFor(fake).lookup('+14155550123');
    expect(result.status).toBe('found');
    if (result.status !== 'found') return;
    for (const c of ['\u202E', '\u202C', '\u0000', '\u001b']) expect(result.name).not.toContain(c);
    expect(result.name.startsWith('gnp.exe <b>Mallory</b>')).toBe(true);
    expect(Array.from(result.name).length).toBeLessThanOrEqual(128);
    expect(result.company).toBe('=HYPERLINK("javascript:alert(1)")'); // text, shown as text
    expect(result.recordUrl).toBe(`https://app.hubspot.com/contacts/20251122/record/0-1/${c.id}`);
  });
});

describe.skipIf(!canRun || !tinyproxyAvailable('test/crm/hubspot.test.ts'))(
  'HubSpot lookup through a proxy',
  () => {
    const group = new ProcessGroup();
    afterAll(() => group.cleanup());

    it('goes through the proxy of the settings, like every other connection', async () => {
      const proxy = await new ForwardProxy(group).start();
      const fake = await hubspot();
      fake.addContact({ firstname: 'Ada', phone: '+14155550123' });
      const lookup = lookupFor(fake, { proxyUrl: proxy.url() });
      expect(await lookup.lookup('+14155550123')).toMatchObject({ name: 'Ada' });
      expect(readFileSync(proxy.logFile, 'utf8')).toContain(
        `CONNECT ${new URL(fake.url).host} HTTP/1.1`,
      );
    });
  },
);
