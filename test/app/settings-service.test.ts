/**
 * SettingsService through its public surface: settings in memory (MemorySettings), the secret in
 * a memory keychain, a demo that records whether it was closed.
 */
import { describe, expect, it } from 'vitest';
import { NOT_SET_UP } from '../../src-main/core/connection/connection-supervisor.ts';
import {
  needsReconnect,
  SettingsService,
} from '../../src-main/core/settings-service/settings-service.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { join } from 'node:path';
import {
  settingsPortFor,
  type SettingsPort,
} from '../../src-main/core/settings-service/settings-port.ts';
import { SettingsStore } from '../../src-main/core/settings/settings-store.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { fixedTranslator, type TranslatorSource } from '../../src-shared/i18n/locale-state.ts';
import { MemorySettings } from '../../rigs/app-harness.ts';
import { render } from '../../src-shared/i18n/phrase.ts';

const tmp = useTempDir('settings-service-');
const ACME = { baseUrl: 'https://acme.example.com', apiKey: 'key1', extensions: ['101'] };
const ACME_ACCOUNT = keychainAccount('key1', 'https://acme.example.com');

async function harness(
  initial: Partial<Settings> = {},
  opts: { demoFails?: boolean; words?: TranslatorSource; port?: SettingsPort } = {},
) {
  const settings = new MemorySettings(initial);
  const credentials = new MemoryCredentialStore();
  const secrets = new SecretRegistry();
  const demo = { starts: 0, closes: 0 };
  const probes: Array<{ baseUrl: string; secret: string }> = [];
  const service = new SettingsService({
    ...(opts.words ? { words: opts.words } : {}),
    logger: memoryLogger(secrets),
    secrets,
    settings: opts.port ?? settings,
    credentials,
    startDemo: async () => {
      demo.starts++;
      if (opts.demoFails) throw new Error('port in use');
      return {
        baseUrl: 'http://127.0.0.1:9',
        apiKey: 'demo-key',
        secret: 'demo-secret-xyz',
        tenant: 'demo-tenant',
        extension: '105',
        close: async () => {
          demo.closes++;
        },
      };
    },
    createProbe: (input) => {
      probes.push({ baseUrl: input.baseUrl, secret: input.secret });
      return {
        getToken: async () => 'token',
        listExtensions: async () => [{ number: '105', callerIdName: 'Front desk' }],
      };
    },
    localAddress: async () => null,
    inspectContactsFile: async (path) =>
      path.endsWith('.csv')
        ? { ok: true, count: 3 }
        : { ok: false, problem: { kind: 'no-phone-column', columns: ['Name', 'E-mail'] } },
  });
  return { settings, credentials, secrets, demo, probes, service };
}

describe('SettingsService', () => {
  it('until loaded: defaults and onboarding; loaded with a key in the keychain: set up', async () => {
    const t = await harness(ACME);
    expect(t.service.loaded()).toBe(false);
    expect(t.service.view()).toEqual({
      settings: DEFAULT_SETTINGS,
      hasSecret: false,
      hasCrmSecret: false,
      hasCrmLogSecret: false,
      needsOnboarding: true,
      // From each phone system's wire dialect: Yeastar P-Series has no SMS event.
      notOffered: { standard: [], 'yeastar-p-series': ['sms'] },
    });
    await t.credentials.setSecret(ACME_ACCOUNT, 'the-secret-1');
    await t.service.load();
    expect(t.service.needsOnboarding()).toBe(true); // the keychain is read by prepare()
    await t.service.prepare();
    expect(t.service.view()).toMatchObject({ hasSecret: true, needsOnboarding: false });
    expect(t.service.settings().baseUrl).toBe('https://acme.example.com');
  });

  it('stores a secret only with valid settings that name its account, and names a locked keychain', async () => {
    const t = await harness();
    await t.service.load();
    expect(
      await t.service.save({ settings: { ...ACME, baseUrl: 'ftp://x' }, secret: 'new-secret-1' }),
    ).toMatchObject({ ok: false, field: 'baseUrl' });
    expect(await t.service.save({ settings: {}, secret: 'orphan-secret' })).toMatchObject({
      ok: false,
      field: 'apiKey',
    });
    expect(await t.credentials.getSecret(ACME_ACCOUNT)).toBeNull();
    expect(t.settings.saves).toBe(0);

    const saved = await t.service.save({ settings: ACME, secret: ' new-secret-1 ' });
    expect(saved).toMatchObject({ ok: true, change: { secretChanged: true } });
    expect(await t.credentials.getSecret(ACME_ACCOUNT)).toBe('new-secret-1');
    expect(t.secrets.redact('x new-secret-1 y')).not.toContain('new-secret-1');
    expect(t.service.view()).toMatchObject({ hasSecret: true, needsOnboarding: false });

    t.credentials.setSecret = async () => Promise.reject(new Error('keychain locked'));
    expect(await t.service.save({ settings: ACME, secret: 'new-secret-2' })).toMatchObject({
      ok: false,
      field: 'secret',
      message: expect.stringContaining('keychain'),
    });
  });

  it('accepts a new contacts file only when the user picked it, and says what is in it', async () => {
    const t = await harness(ACME);
    await t.service.load();
    expect(await t.service.save({ settings: { contactsFile: '/home/a/c.csv' } })).toMatchObject({
      ok: false,
      field: 'contactsFile',
    });
    expect(await t.service.pickContactsFile('/home/a/notes.txt')).toEqual({
      status: 'failed',
      path: '/home/a/notes.txt',
      message:
        'No contacts found: no column holds phone numbers. The file’s columns are: Name, E-mail. Export your contacts again as “Google CSV”, “Outlook CSV” or vCard, or name the columns “Name” and “Phone”.',
    });
    expect(await t.service.pickContactsFile('/home/a/c.csv')).toEqual({
      status: 'picked',
      path: '/home/a/c.csv',
      contacts: 3,
    });
    expect(await t.service.save({ settings: { contactsFile: '/home/a/c.csv' } })).toMatchObject({
      ok: true,
    });
    expect(await t.service.save({ settings: { contactsFile: '' } })).toMatchObject({ ok: true });
  });

  it('says what is wrong with the CRM lookup in the user’s language and names its part, saving nothing', async () => {
    // The real settings file and its validation (MemorySettings checks only the address).
    const store = new SettingsStore({ path: join(tmp.path, 'settings.json') });
    const german = fixedTranslator('de').current();
    const t = await harness(ACME, {
      words: fixedTranslator('de'),
      port: settingsPortFor(store, silentLogger),
    });
    await t.service.load();
    const generic = {
      ...DEFAULT_SETTINGS.crmLookup,
      provider: 'generic' as const,
      nameField: 'name',
    };
    const refused = async (crmLookup: object) => {
      const saved = await t.service.save({ settings: { crmLookup } as Partial<Settings> });
      expect(saved.ok).toBe(false);
      // The window says the refusal's words in its language (here German).
      return saved.ok ? null : { field: saved.field, message: render(saved.words, german) };
    };
    expect(
      await refused({ ...generic, urlTemplate: 'http://crm.example.com/?phone={number}' }),
    ).toEqual({
      field: 'crmLookup.urlTemplate',
      message:
        'Die Abfrageadresse muss mit https:// beginnen: Die Nummer des Anrufers wird nie unverschlüsselt übertragen.',
    });
    expect(await refused({ ...generic, urlTemplate: 'https://{number}.crm.example.com/' })).toEqual(
      {
        field: 'crmLookup.urlTemplate',
        message:
          'Setzen Sie {number} oder {digits} nur als Wert eines Abfrageparameters ein (…?phone={number}), damit ein Anrufer nicht ändern kann, wohin die Abfrage geht.',
      },
    );
    const url = 'https://crm.example.com/callers?phone={number}';
    expect(await refused({ ...generic, urlTemplate: url, nameField: '' })).toMatchObject({
      field: 'crmLookup.nameField',
    });
    expect(await refused({ ...generic, urlTemplate: url, companyField: 'a..b' })).toEqual({
      field: 'crmLookup.companyField',
      message: expect.stringContaining('z. B. name oder contact.company'),
    });
    expect(await refused({ ...generic, urlTemplate: url, timeoutSec: 60 })).toEqual({
      field: 'crmLookup.timeoutSec',
      message: 'Geben Sie eine ganze Zahl von Sekunden zwischen 1 und 10 ein.',
    });
    // What the form never sends keeps validate-settings' own words, still naming its part.
    expect(await refused({ ...generic, provider: 'salesforce' })).toEqual({
      field: 'crmLookup.provider',
      message: expect.stringContaining('"hubspot"'),
    });
    // The rules are validate-settings' alone: a template with spaces around it is trimmed there.
    expect(
      await t.service.save({
        settings: { crmLookup: { ...generic, urlTemplate: ` ${url} `, timeoutSec: 11 } },
      }),
    ).toMatchObject({ ok: false, field: 'crmLookup.timeoutSec' });
    expect(t.service.settings().crmLookup).toEqual(DEFAULT_SETTINGS.crmLookup);
    expect(
      await t.service.save({ settings: { crmLookup: { ...generic, urlTemplate: url } } }),
    ).toMatchObject({
      ok: true,
    });
  });

  it('refuses "This proxy" without its address at the field, in the user’s language', async () => {
    const t = await harness(ACME, { words: fixedTranslator('de') });
    await t.service.load();
    const saved = await t.service.save({ settings: { proxyMode: 'manual', proxyUrl: '' } });
    expect(saved).toMatchObject({ ok: false, field: 'proxyUrl' });
    // The window says the refusal's words in its language (here German).
    expect(saved.ok ? '' : render(saved.words, fixedTranslator('de').current())).toContain(
      'Geben Sie die Adresse des Proxys ein',
    );
    expect(t.settings.current.proxyMode).not.toBe('manual');
    expect(
      await t.service.save({
        settings: { proxyMode: 'manual', proxyUrl: 'http://proxy.example.com:3128' },
      }),
    ).toMatchObject({ ok: true });
  });

  it('says which saved changes need a new connection', () => {
    const before = { ...DEFAULT_SETTINGS, ...ACME };
    const change = (after: Partial<Settings>, secretChanged = false) => ({
      before,
      after: { ...before, ...after },
      secretChanged,
    });
    expect(needsReconnect(change({ doNotDisturb: true, popupLingerSec: 9 }))).toBe(false);
    expect(needsReconnect(change({}, true))).toBe(true);
    expect(needsReconnect(change({ extensions: ['101', '102'] }))).toBe(true);
    expect(needsReconnect(change({ relayUrl: 'wss://relay.example.com' }))).toBe(true);
    expect(needsReconnect(change({ extensions: ['101'] }))).toBe(false); // equal, not the same array
    // The connection's transport is built from these: a new proxy or CA file needs new sockets.
    expect(needsReconnect(change({ proxyMode: 'none' }))).toBe(true);
    expect(needsReconnect(change({ proxyUrl: 'http://proxy.example.com:3128' }))).toBe(true);
    expect(needsReconnect(change({ caFile: '/etc/screenpop/ca.pem' }))).toBe(true);
  });

  it('plans the connection: none until set up, the keychain for the real service', async () => {
    const t = await harness(ACME);
    await t.service.load();
    await t.service.prepare();
    expect(t.service.plan()).toEqual({ connect: false, status: NOT_SET_UP });
    await t.credentials.setSecret(ACME_ACCOUNT, 'the-secret-1');
    await t.service.prepare();
    expect(t.service.plan()).toEqual({
      connect: true,
      settings: t.service.settings(),
      credentials: t.credentials,
      demo: false,
    });
  });

  it('an organisation-mode computer plays the demo as the demo: its plan is not organisation mode', async () => {
    const t = await harness({
      demoMode: true,
      connectionMode: 'organisation',
      relayUrl: 'wss://relay.acme.example.com',
      relayTenant: 'acme',
    });
    await t.service.load();
    await t.service.prepare();
    const plan = t.service.plan();
    if (!plan.connect) throw new Error('the demo should connect');
    // withOrganisationMode builds the relay-only connection for connectionMode "organisation":
    // the demo's simulator must get the API-key connection, with the demo's key.
    expect(plan).toMatchObject({
      demo: true,
      settings: { connectionMode: 'api-key', baseUrl: 'http://127.0.0.1:9', relayUrl: '' },
    });
    // Leaving the demo: organisation mode again, waiting for its sign-in.
    await t.service.update({ demoMode: false });
    expect(t.service.plan()).toMatchObject({ connect: false });
  });

  it("in demo mode plans the demo's service with its secret in memory, and leaving it closes nothing by itself", async () => {
    const t = await harness({ demoMode: true });
    await t.service.load();
    await t.service.prepare();
    await t.service.prepare(); // started once
    expect(t.demo.starts).toBe(1);
    const plan = t.service.plan();
    if (!plan.connect) throw new Error('the demo should connect');
    expect(plan).toMatchObject({
      demo: true,
      settings: {
        baseUrl: 'http://127.0.0.1:9',
        apiKey: 'demo-key',
        extensions: ['105'],
        relayTenant: 'demo-tenant',
        eventSource: 'direct',
      },
    });
    expect(
      await plan.credentials.getSecret(keychainAccount('demo-key', 'http://127.0.0.1:9')),
    ).toBe('demo-secret-xyz');
    expect(await t.credentials.getSecret(keychainAccount('demo-key', 'http://127.0.0.1:9'))).toBe(
      null,
    );
    expect(t.service.view()).toMatchObject({ hasSecret: true, needsOnboarding: false });

    // Test connection in demo mode tests the demo's service, with the demo's secret.
    expect(await t.service.testConnection({ settings: {} })).toMatchObject({ ok: true });
    expect(t.probes.at(-1)).toEqual({ baseUrl: 'http://127.0.0.1:9', secret: 'demo-secret-xyz' });

    // Entering a service address and key (the form never sends demoMode) leaves the demo.
    const left = await t.service.save({ settings: ACME, secret: 'real-secret-1' });
    expect(left).toMatchObject({ ok: true, change: { after: { demoMode: false } } });
    expect(t.service.plan()).toMatchObject({ connect: true, demo: false });
    expect(t.demo.closes).toBe(0); // the runtime closes it once the new connection is up
    await t.service.closeDemo();
    await t.service.closeDemo();
    expect(t.demo.closes).toBe(1);
  });

  it('a demo that cannot start is logged, and the plan says so instead of connecting', async () => {
    const t = await harness({ demoMode: true }, { demoFails: true });
    await t.service.load();
    await t.service.prepare();
    expect(t.service.plan()).toEqual({
      connect: false,
      status: expect.objectContaining({ reason: 'The demo could not start.' }),
    });
    await expect(t.service.startDemo()).rejects.toThrow('port in use');
  });
});
