/**
 * A Yeastar P-Series PBX's own lists (docs/phone-systems/yeastar-p-series.md section 9), through
 * the public surfaces: the service client against a far side answering with the guide's example
 * shapes (test/fixtures/yeastar-p-series) and against the simulator in that mode over real
 * sockets; the directory that caches them; the card and the runner's pop line that show them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CONTACT_PAGE_SIZE,
  GROUP_PAGE_SIZE,
  MAX_COMPANY_CONTACTS,
  MAX_GROUPS,
  ServiceClient,
} from '../../src-shared/api/service-client.ts';
import type { PbxContact, PbxGroup } from '../../src-shared/api/pbx-lists.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import { isServiceError } from '../../src-shared/api/service-errors.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { Directory, type DirectoryEntry } from '../../src-main/core/contacts/directory.ts';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { parseHeadlessArgs, UsageError } from '../../src-main/headless/args.ts';
import { popLine } from '../../src-main/headless/output.ts';
import { callStateData } from '../../src-shared/wire/envelope.ts';
import { startSimulator } from '../../src-sim/index.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { directTransport } from '../../rigs/direct-transport.ts';
import { presenterHarness } from '../../rigs/app-harness.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A far side answering each list's path with a body (a text, or a function of the request). */
function farSide(answers: Record<string, string | ((url: URL) => unknown)>) {
  const seen: URL[] = [];
  const fetch = (async (input: URL | string) => {
    const url = new URL(String(input));
    seen.push(url);
    const answer = answers[url.pathname.replace('/openapi/v1.0/', '')];
    if (answer === undefined)
      return new Response('{"errcode":10001,"errmsg":"INTERFACE NOT EXISTED"}');
    const body = typeof answer === 'string' ? answer : JSON.stringify(answer(url));
    return new Response(body, { headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  const secrets = new SecretRegistry();
  const client = new ServiceClient({
    baseUrl: 'https://acme.yeastarcloud.com',
    clock: new FakeClock(),
    fetch,
    secrets,
    logger: memoryLogger(secrets),
    api: wireFor('yeastar-p-series').api,
  });
  return { client, seen };
}

/** A list that claims `total` entries and fills every page it is asked for. */
function endless(total: number, key: string, entry: (i: number) => unknown) {
  return (url: URL) => {
    const page = Number(url.searchParams.get('page'));
    const size = Number(url.searchParams.get('page_size'));
    const items = Array.from({ length: size }, (_, i) => entry((page - 1) * size + i));
    return { errcode: 0, errmsg: 'SUCCESS', total_number: total, [key]: items };
  };
}

function directory(
  lists: {
    extensions?: DirectoryEntry[];
    groups?: () => Promise<PbxGroup[]>;
    contacts?: () => Promise<PbxContact[]>;
  },
  files: Record<string, string> = {},
) {
  return new Directory({
    clock: new FakeClock(),
    logger: silentLogger,
    fetchExtensions: async () => lists.extensions ?? [],
    ...(lists.groups && { fetchGroups: lists.groups }),
    ...(lists.contacts && { fetchPbxContacts: lists.contacts }),
    defaultRegion: 'US',
    readFile: async (p) => new TextEncoder().encode(files[p] ?? ''),
  });
}

const SALES: PbxGroup = { kind: 'queue', number: '6400', name: 'Sales' };
const RECEPTION: PbxGroup = { kind: 'ring-group', number: '6300', name: 'Reception' };

describe('the PBX lists through the service client (the guide’s answers)', () => {
  it('reads queues (queue_list) and ring groups (data), with the token in the query', async () => {
    const { client, seen } = farSide({
      'queue/list': fixture('constructed-queue-list-response.json'),
      'ringgroup/list': fixture('constructed-ring-group-list-response.json'),
    });
    const groups = await client.listGroups('tok-123');
    expect(groups).toEqual({
      complete: true,
      items: [
        { kind: 'queue', number: '6400', name: 'Sales' },
        { kind: 'queue', number: '6401', name: 'Support' },
        { kind: 'ring-group', number: '8018', name: 'Reception' },
        { kind: 'ring-group', number: '6300', name: 'Night desk' },
      ],
    });
    expect(seen.map((u) => u.pathname)).toEqual([
      '/openapi/v1.0/queue/list',
      '/openapi/v1.0/ringgroup/list',
    ]);
    expect(seen.every((u) => u.searchParams.get('access_token') === 'tok-123')).toBe(true);
  });

  it('reads company contacts: the numbers people call from, not faxes; a nameless one is skipped', async () => {
    const { client } = farSide({
      'company_contact/list': fixture('constructed-company-contact-list-response.json'),
    });
    expect(await client.listCompanyContacts('tok')).toEqual({
      complete: true,
      items: [
        {
          name: 'Joseph Goffin',
          company: 'Ticketsales',
          numbers: [
            { number: '+14155550170', kind: 'work' },
            { number: '+14155550180', kind: 'mobile' },
          ],
        },
        {
          name: 'Jay Prichett',
          company: 'Closet',
          numbers: [{ number: '+14155550171', kind: 'mobile' }],
        },
      ],
    });
  });

  it('pages until the total, and stops at the cap however large the PBX says its list is', async () => {
    const { client, seen } = farSide({
      'queue/list': endless(1_000_000, 'queue_list', (i) => ({ number: String(i), name: `Q${i}` })),
      'ringgroup/list': fixture('constructed-ring-group-list-response.json'),
      'company_contact/list': endless(1_000_000, 'data', (i) => ({
        contact_name: `C${i}`,
        mobile: `+1415555${String(i).padStart(4, '0')}`,
      })),
    });
    const groups = await client.listGroups('tok');
    expect(groups.complete).toBe(false);
    expect(groups.items.filter((g) => g.kind === 'queue')).toHaveLength(MAX_GROUPS);
    expect(seen.filter((u) => u.pathname.endsWith('queue/list'))).toHaveLength(
      MAX_GROUPS / GROUP_PAGE_SIZE,
    );
    const contacts = await client.listCompanyContacts('tok');
    expect(contacts.complete).toBe(false);
    expect(contacts.items).toHaveLength(MAX_COMPANY_CONTACTS);
    expect(seen.filter((u) => u.pathname.endsWith('company_contact/list'))).toHaveLength(
      MAX_COMPANY_CONTACTS / CONTACT_PAGE_SIZE,
    );
    expect(seen.at(-1)?.searchParams.get('page_size')).toBe(String(CONTACT_PAGE_SIZE));
  });

  it('untrusted names are cut and made inert; entries without a number are skipped', async () => {
    const { client } = farSide({
      'queue/list': JSON.stringify({
        errcode: 0,
        total_number: 3,
        queue_list: [
          { number: '6400', name: `\u202Eevil\u0007 ${'x'.repeat(500)}` },
          { name: 'no number' },
          { number: '9'.repeat(65), name: 'number too long' },
          'not an object',
        ],
      }),
      'ringgroup/list': '{"errcode":0,"total_number":0,"data":[]}',
    });
    const { items } = await client.listGroups('tok');
    expect(items).toHaveLength(1);
    expect(items[0]?.name).toMatch(/^evil x+…$/);
    expect(Array.from(items[0]!.name)).toHaveLength(128);
  });

  it('a refusal (10005 ACCESS DENIED) is a ServiceError, as for any call', async () => {
    const { client } = farSide({ 'queue/list': '{"errcode":10005,"errmsg":"ACCESS DENIED"}' });
    const error = await client.listGroups('tok').catch((e: unknown) => e);
    expect(isServiceError(error)).toBe(true);
  });
});

describe('the directory: which queue or ring group, and whose name', () => {
  it('names the last queue or ring group of a call_path; an IVR or unknown number names nothing', async () => {
    const dir = directory({ groups: async () => [SALES, RECEPTION] });
    await dir.refreshNow();
    expect(dir.groupOf('6400')).toEqual({ kind: 'queue', name: 'Sales' });
    // An IVR (6200) then the queue; the queue overflowing to the ring group: the last one rings.
    expect(dir.groupOf('6200-6400')).toEqual({ kind: 'queue', name: 'Sales' });
    expect(dir.groupOf('6200,6400,6300')).toEqual({ kind: 'ring-group', name: 'Reception' });
    expect(dir.groupOf('6300 > 6999')).toEqual({ kind: 'ring-group', name: 'Reception' });
    expect(dir.groupOf('6200')).toBeNull();
    expect(dir.groupOf(' ')).toBeNull(); // the guide's example sends " " when there is none
    expect(dir.groupOf('')).toBeNull();
    // Bounded: only the first 256 characters are read.
    expect(dir.groupOf(`${'1-'.repeat(200)}6400`)).toBeNull();
  });

  it('a failed group list keeps the last one and never holds up the extension list', async () => {
    let fail = false;
    const dir = directory({
      extensions: [{ number: '102', callerIdName: 'Grace Hopper' }],
      groups: async () => {
        if (fail) throw new Error('ACCESS DENIED');
        return [SALES];
      },
    });
    await dir.refreshNow();
    fail = true;
    await dir.refreshNow();
    expect(dir.groupOf('6400')).toEqual({ kind: 'queue', name: 'Sales' });
    expect(dir.lookup('102')).toBe('Grace Hopper');
    dir.forgetExtensions(); // another PBX: its lists are not known yet
    expect(dir.groupOf('6400')).toBeNull();
  });

  it('names callers: extension list, then the user’s contacts file, then the PBX’s company contacts', async () => {
    const dir = directory(
      {
        extensions: [{ number: '+14155550170', callerIdName: 'Ada Lovelace' }],
        contacts: async () => [
          {
            name: 'Joseph Goffin',
            company: 'Ticketsales',
            numbers: [{ number: '+14155550170', kind: 'work' }],
          },
          {
            name: 'Jay Prichett',
            company: 'Closet',
            numbers: [{ number: '+14155550171', kind: 'mobile' }],
          },
          {
            name: 'Mira Osei',
            company: 'Harbour',
            numbers: [{ number: '+14155550172', kind: 'work' }],
          },
        ],
      },
      { '/c.csv': 'Name,Phone\nJ. Prichett (my file),+1 415 555 0171\n' },
    );
    await dir.refreshNow();
    await dir.loadContactsFile('/c.csv');
    expect(dir.identify('+14155550170')).toMatchObject({
      name: 'Ada Lovelace',
      source: 'directory',
    });
    expect(dir.identify('+14155550171')).toMatchObject({
      name: 'J. Prichett (my file)',
      source: 'contacts',
    });
    expect(dir.identify('(415) 555-0172')).toEqual({
      name: 'Mira Osei',
      source: 'pbx-contacts',
      company: 'Harbour',
      numberKind: 'work',
    });
    expect(dir.pbxContactCount).toBe(3);
  });
});

describe('the card and the runner’s pop line', () => {
  it('the card says the queue by name; it fills in when the lists arrive after the ring', async () => {
    let answer!: (groups: PbxGroup[]) => void;
    const dir = directory({ groups: () => new Promise((resolve) => (answer = resolve)) });
    const refreshing = dir.refreshNow();
    const t = presenterHarness({ directory: dir });
    dir.onChange(() => t.presenter.refreshNames());
    t.presenter.handlePop({ ...t.pop('c1'), callPath: '6400' });
    t.presenter.handlePop({ ...t.pop('c2', '+14155550999'), callPath: '9999' });
    expect(t.popup.cards.map((c) => c.group)).toEqual([null, null]);
    answer([SALES]);
    await refreshing;
    const byId = new Map(t.presenter.cards().map((c) => [c.callId, c.group]));
    expect(byId.get('c1')).toEqual({ kind: 'queue', name: 'Sales' });
    expect(byId.get('c2')).toBeNull(); // unknown: nothing rather than a raw number
  });

  it('a card pops without a group when the lists cannot be read', async () => {
    const dir = directory({
      groups: () => Promise.reject(new Error('unreachable')),
      contacts: () => Promise.reject(new Error('unreachable')),
    });
    await dir.refreshNow();
    const t = presenterHarness({ directory: dir });
    t.presenter.handlePop({ ...t.pop('c1'), callPath: '6400' });
    expect(t.notifier.shown).toHaveLength(1);
    expect(t.popup.cards[0]).toMatchObject({ callId: 'c1', group: null, state: 'ringing' });
  });

  it('the pop line names the group; a pop without one says null', () => {
    const pop = {
      callId: 'c1',
      from: '+14155550170',
      to: '101',
      line: '2002',
      callPath: '6400',
      eventId: 'e1',
      timestamp: 1,
      receivedAt: 1,
      source: 'direct',
    };
    const who = {
      name: 'Joseph Goffin',
      source: 'pbx-contacts' as const,
      company: 'Ticketsales',
      numberKind: 'work' as const,
    };
    expect(popLine(pop, who, { group: { kind: 'queue', name: 'Sales' } })).toMatchObject({
      caller_name: 'Joseph Goffin',
      name_source: 'pbx-contacts',
      caller_company: 'Ticketsales',
      line: '2002',
      group_kind: 'queue',
      group_name: 'Sales',
    });
    expect(popLine(pop, null)).toMatchObject({ group_kind: null, group_name: null });
  });

  it('call_path reaches the pop from the envelope, bounded; a blank one is none', () => {
    const data = { call_id: 'c1', from: '1', to: '101', state: 'ringing' };
    const envelope = (extra: object) => ({
      event: 30011,
      timestamp: 1,
      tenant: 't',
      event_id: 'e',
      data: { ...data, ...extra },
    });
    expect(callStateData(envelope({ call_path: '6400' }))?.call_path).toBe('6400');
    expect(callStateData(envelope({ call_path: ' ' }))?.call_path).toBeUndefined();
    expect(callStateData(envelope({ call_path: 'x'.repeat(257) }))?.call_path).toBeUndefined();
    expect(callStateData(envelope({ call_path: 6400 }))?.call_path).toBeUndefined();
  });

  it('--directory: the PBX contacts by default on Yeastar, off with extensions, refused elsewhere', () => {
    const base = ['--base-url', 'https://pbx.example.com', '--extension', '101'];
    const yeastar = [...base, '--phone-system', 'yeastar-p-series'];
    expect(parseHeadlessArgs(yeastar).directory).toBe('pbx-contacts');
    expect(parseHeadlessArgs([...yeastar, '--directory', 'extensions']).directory).toBe(
      'extensions',
    );
    expect(parseHeadlessArgs(base).directory).toBe('extensions');
    expect(() => parseHeadlessArgs([...base, '--directory', 'pbx-contacts'])).toThrow(UsageError);
    expect(() => parseHeadlessArgs([...yeastar, '--directory', 'crm'])).toThrow(
      '--directory must be one of extensions, pbx-contacts: "crm"',
    );
  });
});

describe('against the simulator in Yeastar mode (real sockets)', () => {
  it('the connection reads the queues, ring groups and company contacts with its one token', async () => {
    const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 5 });
    cleanups.push(() => sim.close());
    const secrets = new SecretRegistry();
    const logger = memoryLogger(secrets);
    const connection = serviceConnectionFactory({
      clock: systemClock,
      logger,
      secrets,
      transport: () => directTransport({ logger, secrets }),
    })({
      baseUrl: sim.baseUrl,
      settings: { ...DEFAULT_SETTINGS, phoneSystem: 'yeastar-p-series', baseUrl: sim.baseUrl },
      credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    });
    cleanups.push(() => connection.stop());
    const before = sim.stats().getToken;
    const groups = await connection.fetchGroups?.();
    const contacts = await connection.fetchCompanyContacts?.();
    await connection.fetchExtensions();
    expect(groups).toEqual([
      { kind: 'queue', number: '6400', name: 'Sales' },
      { kind: 'queue', number: '6401', name: 'Support' },
      { kind: 'ring-group', number: '6300', name: 'Reception' },
    ]);
    expect(contacts?.map((c) => c.name)).toEqual(['Joseph Goffin', 'Jay Prichett', 'Mira Osei']);
    expect(sim.stats().getToken - before).toBe(1); // one token for every list
  });

  it('a standard service has no such lists: the connection does not ask for them', async () => {
    const sim = await startSimulator({ extensions: 2 });
    cleanups.push(() => sim.close());
    const secrets = new SecretRegistry();
    const logger = memoryLogger(secrets);
    const connection = serviceConnectionFactory({
      clock: systemClock,
      logger,
      secrets,
      transport: () => directTransport({ logger, secrets }),
    })({
      baseUrl: sim.baseUrl,
      settings: { ...DEFAULT_SETTINGS, baseUrl: sim.baseUrl },
      credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    });
    cleanups.push(() => connection.stop());
    expect(connection.fetchGroups).toBeUndefined();
    expect(connection.fetchCompanyContacts).toBeUndefined();
  });
});
