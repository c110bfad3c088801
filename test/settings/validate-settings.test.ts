import { describe, expect, it } from 'vitest';
import { applyPatch, validateSettings } from '../../src-main/core/settings/settings-store.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import type { Settings } from '../../src-main/core/settings/types.ts';
import { DENIED_SCHEMES, vetExternalUrl } from '../../src-main/core/links/external-url.ts';
import { LOCALES, PSEUDO_LOCALE } from '../../src-shared/i18n/locales.ts';

const fields = (problems: Array<{ field: string }>) => problems.map((p) => p.field);

describe('validateSettings', () => {
  it('accepts the defaults and a fully filled-in file unchanged', () => {
    expect(validateSettings(DEFAULT_SETTINGS)).toEqual({
      settings: DEFAULT_SETTINGS,
      problems: [],
    });
    const full: Settings = {
      ...DEFAULT_SETTINGS,
      baseUrl: 'https://acme.example.com',
      apiKey: 'sk_abc',
      extensions: ['101', '205'],
      dids: ['+1 415 555 0100'],
      defaultRegion: 'GB',
      eventSource: 'relay',
      relayUrl: 'wss://relay.example.com/screenpop',
      relayTenant: 'acme-eu.1_b',
      crmUrlTemplate: 'https://crm.example.com/search?q={from}&call={call_id}',
      crmAllowedSchemes: ['https', 'salesforce'],
      popupCorner: 'top-left',
      contactsFile: '/home/me/contacts.vcf',
    };
    expect(validateSettings(full)).toEqual({ settings: full, problems: [] });
  });

  it('fills missing fields with defaults without complaint', () => {
    const { settings, problems } = validateSettings({ baseUrl: 'https://acme.example.com/' });
    expect(problems).toEqual([]);
    expect(settings).toEqual({ ...DEFAULT_SETTINGS, baseUrl: 'https://acme.example.com' });
  });

  it('reports each bad field by name, replaces it by its default and keeps the good ones', () => {
    const { settings, problems } = validateSettings({
      baseUrl: 'https://acme.example.com',
      sound: 'yes',
      popupLingerSec: -3,
      popupCorner: 'middle',
      eventSource: 'carrier-pigeon',
      defaultRegion: 'USA',
    });
    expect(fields(problems).sort()).toEqual([
      'defaultRegion',
      'eventSource',
      'popupCorner',
      'popupLingerSec',
      'sound',
    ]);
    expect(settings.baseUrl).toBe('https://acme.example.com');
    expect(settings.sound).toBe(DEFAULT_SETTINGS.sound);
    expect(settings.popupLingerSec).toBe(DEFAULT_SETTINGS.popupLingerSec);
    const msg = (f: string) => problems.find((p) => p.field === f)?.message ?? '';
    expect(msg('sound')).toMatch(/sound must be true or false; the default is used/);
    expect(msg('popupLingerSec')).toMatch(/whole number from 0 to 300/);
    expect(msg('popupCorner')).toMatch(/"bottom-right"/);
  });

  it('the call log: which calls, the note card’s seconds, and outcome choices of one plain line each', () => {
    const { settings, problems } = validateSettings({
      callLogCalls: 'answered-and-missed',
      callNoteSec: 120,
      callLogChoices: [
        'Resolved',
        ' Follow-up ',
        'x'.repeat(41),
        'Evil\u202e',
        'two\nlines',
        '',
        7,
      ],
    });
    expect(settings.callLogCalls).toBe('answered-and-missed');
    expect(settings.callNoteSec).toBe(120);
    expect(settings.callLogChoices).toEqual(['Resolved', 'Follow-up']);
    expect(fields(problems)).toEqual([
      'callLogChoices[2]',
      'callLogChoices[3]',
      'callLogChoices[4]',
      'callLogChoices[5]',
      'callLogChoices[6]',
    ]);
    expect(problems[0]?.message).toMatch(/not an outcome choice \(plain text on one line, 1 to 40/);
    const bad = validateSettings({ callLogCalls: 'everything', callNoteSec: 901 });
    expect(fields(bad.problems)).toEqual(['callLogCalls', 'callNoteSec']);
    expect(bad.settings.callLogCalls).toBe('answered');
    expect(
      validateSettings({
        callLogChoices: Array(13)
          .fill('a')
          .map((a, i) => a + i),
      }).settings.callLogChoices,
    ).toHaveLength(12);
  });

  it('drops unknown fields with a warning', () => {
    const { settings, problems } = validateSettings(
      JSON.parse('{"colour":"blue","__proto__":{"sound":false}}'),
    );
    expect(fields(problems)).toEqual(['colour', '__proto__']);
    expect(settings.sound).toBe(true);
    expect(problems[0]?.message).toMatch(/not a Screenpop setting.*dropped/);
    expect(settings).not.toHaveProperty('colour');
  });

  it('removes secret-like fields and never echoes their value', () => {
    const { settings, problems } = validateSettings({
      apiKey: 'sk_abc',
      apiSecret: 'hunter2-very-secret',
      password: 'hunter3-very-secret',
      access_token: 'at_abcdef',
    });
    expect(fields(problems)).toEqual(['apiSecret', 'password', 'access_token']);
    expect(JSON.stringify(problems)).not.toMatch(/hunter|at_abcdef/);
    expect(problems[0]?.message).toMatch(/keychain.*removed/);
    expect(JSON.stringify(settings)).not.toMatch(/hunter|at_abcdef/);
    expect(settings.apiKey).toBe('sk_abc');
  });

  it('base address: https, http only for this computer, no credentials, query or fragment', () => {
    const check = (baseUrl: string) => validateSettings({ baseUrl });
    expect(check('https://acme.example.com/').settings.baseUrl).toBe('https://acme.example.com');
    expect(check('http://127.0.0.1:8080').settings.baseUrl).toBe('http://127.0.0.1:8080');
    expect(check('http://localhost:3000/').problems).toEqual([]);
    expect(check('').problems).toEqual([]);
    for (const [bad, why] of [
      ['http://acme.example.com', /https:\/\//],
      ['https://user:pw@acme.example.com', /user name or password/],
      ['https://acme.example.com/?token=x', /query/],
      ['https://acme.example.com/#x', /fragment/],
      ['ftp://acme.example.com', /https:\/\//],
      ['acme.example.com', /not a web address/],
    ] as const) {
      const r = check(bad);
      expect(r.problems, bad).toHaveLength(1);
      expect(r.problems[0]?.field).toBe('baseUrl');
      expect(r.problems[0]?.message).toMatch(why);
      expect(r.settings.baseUrl).toBe('');
    }
    expect(JSON.stringify(check('https://user:pw@acme.example.com').problems)).not.toContain('pw@');
  });

  it('relay address: wss, ws only for this computer', () => {
    expect(validateSettings({ relayUrl: 'wss://relay.example.com' }).problems).toEqual([]);
    expect(validateSettings({ relayUrl: 'ws://127.0.0.1:9000' }).problems).toEqual([]);
    expect(fields(validateSettings({ relayUrl: 'ws://relay.example.com' }).problems)).toEqual([
      'relayUrl',
    ]);
  });

  it("relay tenant: trimmed, the relay's own rule (a letter or digit, then up to 62 of A-Z a-z 0-9 . _ -), empty allowed; bad ones fall back to the default", () => {
    expect(validateSettings({ relayTenant: '  globex ' })).toEqual({
      settings: { ...DEFAULT_SETTINGS, relayTenant: 'globex' },
      problems: [],
    });
    expect(validateSettings({ relayTenant: '' }).problems).toEqual([]);
    expect(validateSettings({ relayTenant: 'a'.repeat(63) }).problems).toEqual([]);
    for (const bad of [
      // The relay refuses these tenant names (TENANT_PATTERN): a setting it would refuse is refused here.
      'a'.repeat(64),
      '.acme',
      '-acme',
      '..',
      'acme/eu',
      'ac me',
      '../x',
      'acme?x=1',
      'ä',
      42,
      null,
      ['acme'],
    ]) {
      const r = validateSettings({ relayTenant: bad });
      expect(fields(r.problems), String(bad)).toEqual(['relayTenant']);
      expect(r.problems[0]?.message).toMatch(
        /^relayTenant must be the tenant name your relay administrator gave you/,
      );
      expect(r.problems[0]?.message).toMatch(/the default is used$/);
      expect(r.settings.relayTenant).toBe('');
    }
    // From the form a bad value is refused, not replaced.
    expect(applyPatch(DEFAULT_SETTINGS, { relayTenant: 'acme eu' })).toMatchObject({
      ok: false,
      field: 'relayTenant',
    });
    expect(applyPatch(DEFAULT_SETTINGS, { relayTenant: 'acme' })).toMatchObject({
      ok: true,
      settings: { relayTenant: 'acme' },
    });
  });

  it('lists: bad entries are left out one by one and named with their index', () => {
    const { settings, problems } = validateSettings({
      extensions: ['101', 102, 'abc', '101', ' 103 '],
      dids: ['+1 (415) 555-0100', 'call me'],
      crmAllowedSchemes: ['https', 'JavaScript', 'salesforce:'],
    });
    expect(settings.extensions).toEqual(['101', '102', '103']);
    expect(settings.dids).toEqual(['+1 (415) 555-0100']);
    expect(settings.crmAllowedSchemes).toEqual(['https', 'salesforce']);
    expect(fields(problems)).toEqual(['extensions[2]', 'dids[1]', 'crmAllowedSchemes[1]']);
    expect(problems[2]?.message).toMatch(/never allowed/);
    expect(fields(validateSettings({ extensions: '101' }).problems)).toEqual(['extensions']);
  });

  it('CRM link: known placeholders, an allowed scheme, no placeholder in the host', () => {
    const crm = (crmUrlTemplate: string, crmAllowedSchemes = ['https']) =>
      validateSettings({ crmUrlTemplate, crmAllowedSchemes }).problems.map((p) => p.message);
    expect(crm('https://crm.example.com/c/{from}?to={to}&n={caller_name}')).toEqual([]);
    expect(crm('salesforce:lookup?phone={from}', ['https', 'salesforce'])).toEqual([]);
    expect(crm('https://{from}.evil.example.com/')[0]).toMatch(/only after the host/);
    expect(crm('https://crm.example.com/?q={phone}')[0]).toMatch(/unknown placeholder \{phone\}/);
    expect(crm('http://crm.example.com/?q={from}')[0]).toMatch(/never opened with; use https/);
    expect(crm('javascript:alert({from})', ['https'])[0]).toMatch(/never opened with/);
    expect(crm('notes://crm/?q={from}', ['https'])[0]).toMatch(/not in crmAllowedSchemes/);
  });

  it('CRM schemes: the one list the link gate applies; a scheme accepted here always opens', () => {
    const r = validateSettings({ crmAllowedSchemes: ['https', 'http', 'Salesforce:', 'file'] });
    expect(r.settings.crmAllowedSchemes).toEqual(['https', 'salesforce']);
    expect(fields(r.problems)).toEqual(['crmAllowedSchemes[1]', 'crmAllowedSchemes[3]']);
    expect(r.problems[0]?.message).toMatch(/unencrypted/);
    // Every scheme the gate refuses is refused here too, and every scheme accepted here passes it.
    for (const scheme of DENIED_SCHEMES)
      expect(validateSettings({ crmAllowedSchemes: [scheme] }).settings.crmAllowedSchemes).toEqual(
        [],
      );
    const accepted = validateSettings({
      crmAllowedSchemes: ['salesforce', 'msteams', 'tel', 'zoommtg'],
    }).settings.crmAllowedSchemes;
    for (const scheme of accepted)
      expect(vetExternalUrl(`${scheme}:x?q=1`, accepted)).toMatchObject({ ok: true });
    // An empty list still allows https, as the gate does.
    expect(
      validateSettings({ crmAllowedSchemes: [], crmUrlTemplate: 'https://crm.example/?q={from}' })
        .problems,
    ).toEqual([]);
  });

  it('never quotes the value a message is about (a secret pasted into the wrong field)', () => {
    const secret = 'sk_live_Zr8QpV2mXy7wT4nK';
    const r = validateSettings({
      extensions: ['101', secret],
      dids: [secret],
      crmAllowedSchemes: [secret],
      baseUrl: secret,
      relayUrl: secret,
      version: secret,
    });
    expect(r.problems.length).toBeGreaterThanOrEqual(6);
    expect(JSON.stringify(r.problems)).not.toContain(secret.slice(0, 8));
    expect(r.problems.map((p) => p.message)).toContain(
      'extensions[1] is not an extension number (1 to 7 digits, e.g. "101"); it was left out',
    );
  });

  it('a pasted list of 300,000 entries is checked in linear time: the first 100 kept, ten problems and a count', () => {
    // Quadratic de-duplication took 13.9 s of the main process for 200,000 entries; this test
    // would run into its time-out with it.
    const extensions = Array.from({ length: 300_000 }, (_, i) => String(100_000 + (i % 250_000)));
    const r = validateSettings({ extensions, dids: Array(300_000).fill('not a number') });
    expect(r.settings.extensions).toEqual(extensions.slice(0, 100));
    expect(r.settings.dids).toEqual([]);
    expect(fields(r.problems)).toEqual([
      'extensions',
      ...Array.from({ length: 10 }, (_, i) => `dids[${i}]`),
      'dids',
    ]);
    expect(r.problems.at(-1)?.message).toMatch(/299990 more entries/);
  });

  it('version and whole-file shape', () => {
    expect(fields(validateSettings({ version: 2 }).problems)).toEqual(['version']);
    expect(validateSettings([1, 2]).problems[0]?.field).toBe('(file)');
    expect(validateSettings('x').settings).toEqual(DEFAULT_SETTINGS);
    expect(validateSettings(null).problems).toHaveLength(1);
  });

  it('contacts file must be an absolute path', () => {
    expect(validateSettings({ contactsFile: 'contacts.csv' }).problems[0]?.field).toBe(
      'contactsFile',
    );
    expect(validateSettings({ contactsFile: '/x/contacts.csv' }).problems).toEqual([]);
  });
});

describe('the language setting', () => {
  it('takes "system" and exactly the shipped languages (one list: src-shared/i18n/locales.ts)', () => {
    for (const language of ['system', ...LOCALES] as const)
      expect(applyPatch(DEFAULT_SETTINGS, { language }).ok, language).toBe(true);
    for (const language of [PSEUDO_LOCALE, 'it', 'EN', ''])
      expect(applyPatch(DEFAULT_SETTINGS, { language } as Partial<Settings>).ok, language).toBe(
        false,
      );
  });
});

describe('applyPatch', () => {
  it('is all or nothing and names the first bad field', () => {
    const current = { ...DEFAULT_SETTINGS, baseUrl: 'https://acme.example.com' };
    expect(applyPatch(current, { sound: false })).toEqual({
      ok: true,
      settings: { ...current, sound: false },
    });
    const bad = applyPatch(current, { sound: false, baseUrl: 'http://acme.example.com' });
    expect(bad).toMatchObject({ ok: false, field: 'baseUrl' });
    if (!bad.ok) expect(bad.message).not.toMatch(/default is used/);
    expect(applyPatch(current, { secret: 'x' } as Partial<Settings>)).toMatchObject({
      ok: false,
      field: 'secret',
    });
  });
});

describe('the updates setting', () => {
  it('fills what is missing, keeps an https feed, and refuses what would hide a mistake', () => {
    expect(
      validateSettings({ updates: { feedUrl: 'https://updates.acme.example/screenpop/' } }),
    ).toEqual({
      settings: {
        ...DEFAULT_SETTINGS,
        updates: {
          enabled: true,
          channel: 'latest',
          feedUrl: 'https://updates.acme.example/screenpop',
        },
      },
      problems: [],
    });
    const bad = (updates: unknown) => validateSettings({ updates }).problems.map((p) => p.message);
    expect(bad({ enabeld: false })).toEqual([
      'updates has unknown field "enabeld" (known: enabled, channel, feedUrl); the default is used',
    ]);
    expect(bad({ feedUrl: 'http://updates.acme.example' })[0]).toContain(
      'must start with https://',
    );
    expect(bad({ feedUrl: 'https://user:pw@updates.acme.example' })[0]).toContain(
      'must not contain a user name or password',
    );
    expect(bad({ channel: '../latest' })[0]).toContain('channel must be a channel name');
    expect(bad({ enabled: 'no' })[0]).toContain('enabled must be true or false');
    expect(bad('off')[0]).toContain('must be an object');
  });

  it('applies a patch that turns updates off as a whole', () => {
    const result = applyPatch(DEFAULT_SETTINGS, {
      updates: { enabled: false, channel: 'latest', feedUrl: '' },
    });
    expect(result).toEqual({
      ok: true,
      settings: {
        ...DEFAULT_SETTINGS,
        updates: { enabled: false, channel: 'latest', feedUrl: '' },
      },
    });
  });
});

describe('the features setting', () => {
  it('all on by default; a missing one stays on; a misspelt or non-boolean one is refused', () => {
    expect(DEFAULT_SETTINGS.features).toEqual({
      voicemail: true,
      sms: true,
      trunk: true,
      presence: true,
    });
    expect(validateSettings({ features: { sms: false } }).settings.features).toEqual({
      voicemail: true,
      sms: false,
      trunk: true,
      presence: true,
    });
    const bad = (features: unknown) =>
      validateSettings({ features }).problems.map((p) => p.message);
    expect(bad({ smss: false })[0]).toContain(
      'has unknown field "smss" (known: voicemail, sms, trunk, presence)',
    );
    expect(bad({ sms: 'no' })[0]).toContain('sms must be true or false');
    expect(bad([true])[0]).toContain('must be an object');
    expect(validateSettings({ features: { sms: 'no' } }).settings.features.sms).toBe(true);
  });
});

describe('the crmLookup setting', () => {
  it('keeps a usable lookup and names what is wrong with an unusable one', () => {
    const generic = {
      provider: 'generic',
      urlTemplate: ' https://crm.acme.example/api/callers?phone={number} ',
      auth: 'basic',
      nameField: 'contact.name',
      companyField: '',
      recordUrlField: 'links.0.href',
      timeoutSec: 5,
    };
    expect(validateSettings({ crmLookup: generic })).toEqual({
      settings: {
        ...DEFAULT_SETTINGS,
        crmLookup: { ...generic, urlTemplate: generic.urlTemplate.trim(), logUrl: '' },
      },
      problems: [],
    });
    expect(validateSettings({ crmLookup: { provider: 'hubspot' } }).settings.crmLookup).toEqual({
      ...DEFAULT_SETTINGS.crmLookup,
      provider: 'hubspot',
    });
    const bad = (crmLookup: unknown) =>
      validateSettings({ crmLookup }).problems.map((p) => `${p.field}: ${p.message}`);
    expect(bad({ provider: 'generic' })).toEqual([
      'crmLookup: crmLookup urlTemplate is needed for the generic lookup, e.g. https://crm.example.com/api/lookup?phone={number}; the default is used',
    ]);
    expect(bad({ provider: 'generic', urlTemplate: 'https://crm.example/{number}' })[0]).toContain(
      'only as the value of a query parameter',
    );
    expect(
      bad({ provider: 'generic', urlTemplate: 'http://crm.example/?p={number}' })[0],
    ).toContain('must start with https://');
    expect(bad({ provider: 'salesforce' })[0]).toContain('provider must be one of');
    expect(bad({ provider: 'hubspot', token: 'pat-na1-secret' })[0]).toContain(
      'has unknown field "token"',
    );
    expect(bad({ provider: 'hubspot', token: 'pat-na1-secret' })[0]).not.toContain('pat-na1');
    expect(bad({ nameField: '__proto__/x' })[0]).toContain('nameField must be a path');
    expect(bad({ timeoutSec: 60 })[0]).toContain('timeoutSec must be a whole number from 1 to 10');
  });
});
