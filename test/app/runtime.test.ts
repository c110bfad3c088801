/** AppRuntime on a fake connection (the engine's far side) and the fake clock. */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CallLogQueue } from '../../src-main/core/call-log/queue.ts';
import { CrmError } from '../../src-main/core/crm/connector.ts';
import type { StatusView } from '../../src-main/core/ports/views.ts';
import { DesktopHealth } from '../../src-main/core/app/desktop-health.ts';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import { RingActions } from '../../src-main/core/ring-actions/ring-actions.ts';
import { AppRuntime, type AppRuntimeDeps } from '../../src-main/core/app/runtime.ts';
import { validatePolicy } from '../../src-main/core/settings/policy.ts';
import {
  keychainAccount,
  KeychainUnavailableError,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import { phrase, render, type Words } from '../../src-shared/i18n/phrase.ts';
import { faultWords } from '../../src-shared/api/service-errors.ts';
import { saidStatus } from '../../src-main/core/events/status.ts';
import { advanceWithRealIo, FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { useTempDir } from '../support/temp-dir.ts';
import {
  FakeClipboard,
  FakeConnection,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  FakeTray,
  MemorySettings,
} from '../../rigs/app-harness.ts';

async function setup(
  initial: ConstructorParameters<typeof MemorySettings>[0],
  opts: { secret?: string; failKeychain?: boolean; extra?: Partial<AppRuntimeDeps> } = {},
) {
  const clock = new FakeClock();
  const settings = new MemorySettings(initial);
  const credentials = new MemoryCredentialStore();
  if (opts.secret && initial?.apiKey && initial.baseUrl)
    await credentials.setSecret(keychainAccount(initial.apiKey, initial.baseUrl), opts.secret);
  if (opts.failKeychain)
    credentials.setSecret = async () => Promise.reject(new Error('keychain locked'));
  const connections: FakeConnection[] = [];
  const views = {
    notifier: new FakeNotifier(),
    popup: new FakePopup(),
    urlOpener: new FakeOpener(),
    clipboard: new FakeClipboard(),
    tray: new FakeTray(),
  };
  const logger = memoryLogger();
  const runtime = new AppRuntime({
    clock,
    logger,
    secrets: new SecretRegistry(),
    settings,
    credentials,
    history: new HistoryStore({
      path: 'mem',
      clock,
      logger: silentLogger,
      limit: 10,
      write: async () => {},
      read: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOENT' })),
    }),
    views,
    connect: (config) => {
      const c = new FakeConnection(config);
      connections.push(c);
      return c;
    },
    startDemo: async () => ({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'demo-key',
      secret: 'demo-secret-xyz',
      tenant: 'demo-tenant',
      extension: '101',
      close: async () => {},
    }),
    createProbe: () => ({ getToken: async () => 't', listExtensions: async () => [] }),
    ...opts.extra,
  });
  return { clock, settings, credentials, connections, views, runtime, logger };
}

const tmp = useTempDir('sp-runtime-');

const CONFIGURED = { baseUrl: 'https://acme.example.com', apiKey: 'key1', extensions: ['101'] };

describe('AppRuntime', () => {
  it('runs the policy’s actions once per new ringing call, says who manages it, and keeps a status timeline and the last test', async () => {
    const runs: Array<{ program: string; args: readonly string[] }> = [];
    const { policy } = validatePolicy(
      {
        managedBy: 'Acme IT',
        locked: ['baseUrl'],
        settings: { baseUrl: CONFIGURED.baseUrl },
        onRing: [{ run: '/usr/local/bin/log-call', args: ['--from', '{from}', '--id={call_id}'] }],
      },
      '/etc/screenpop/policy.json',
    );
    const logger = memoryLogger();
    const t = await setup(CONFIGURED, {
      secret: 'the-secret-1',
      extra: {
        managed: { by: policy.managedBy, locked: ['baseUrl'] },
        ringActions: new RingActions({
          actions: policy.onRing,
          urlOpener: { open: () => {} },
          runner: {
            run: (program, args) => void runs.push({ program, args }),
            stopAll: () => Promise.resolve(),
            running: () => 0,
          },
          logger,
          allowedSchemes: () => ['https'],
        }),
      },
    });
    await t.runtime.start();
    expect(t.runtime.settingsView().managed).toEqual({ by: 'Acme IT', locked: ['baseUrl'] });
    t.connections[0]?.status({ state: 'connected' });
    t.connections[0]?.pop('c1');
    t.connections[0]?.pop('c1'); // the same call again: no second run
    expect(runs).toEqual([
      { program: '/usr/local/bin/log-call', args: ['--from', '102', '--id=c1'] },
    ]);
    expect(t.runtime.timeline.snapshot().items.map((c) => c.state)).toEqual([
      'connecting',
      'connected',
    ]);
    expect(t.runtime.lastConnectionTest()).toBeNull();
    await t.runtime.testConnection({ settings: {} });
    expect(t.runtime.lastConnectionTest()?.result.ok).toBe(true);
  });

  it('connects when set up, with credentials from the keychain', async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    expect(await t.runtime.start()).toEqual({ needsOnboarding: false });
    expect(t.connections).toHaveLength(1);
    expect(t.connections[0]?.started).toBe(true);
    expect(await t.connections[0]?.config.credentials()).toEqual({
      key: 'key1',
      secret: 'the-secret-1',
    });
    t.connections[0]?.status({ state: 'connected' });
    expect(t.views.tray.last?.status.state).toBe('connected');
  });

  it('names the proxy sign-in in the status while connected through it, never before', async () => {
    const proxy: { inUse?: { scheme: string; identity?: string } } = {};
    const t = await setup(CONFIGURED, {
      secret: 'the-secret-1',
      extra: { proxyAuthInUse: () => proxy.inUse },
    });
    await t.runtime.start();
    t.connections[0]?.status({ state: 'connected' });
    expect(t.views.tray.last?.status.proxyAuth).toBeUndefined();
    proxy.inUse = { scheme: 'Negotiate', identity: 'agent7@CORP.EXAMPLE' };
    t.connections[0]?.status({ state: 'connecting' });
    expect(t.views.tray.last?.status.proxyAuth).toBeUndefined();
    t.connections[0]?.status({ state: 'connected' });
    expect(t.views.tray.last?.status.proxyAuth).toEqual({
      scheme: 'Negotiate',
      user: 'agent7@CORP.EXAMPLE',
    });
  });

  it('voicemail and SMS notify and go to the History; trunk, presence and scope problems reach the tray; a features change reconnects', async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    await t.runtime.start();
    const c = t.connections[0]!;
    c.status({ state: 'connected' });
    const base = { eventId: 'e', timestamp: 1, receivedAt: 1, source: 'direct' };
    c.notice({
      ...base,
      type: 'voicemail',
      voicemailId: 'v1',
      extension: '101',
      from: '102',
      callerName: null,
      durationSec: 42,
      notify: true,
    });
    c.notice({
      ...base,
      type: 'sms',
      messageId: 'm1',
      from: '+1',
      to: '101',
      text: 'hi',
      notify: true,
    });
    c.notice({
      ...base,
      type: 'trunk',
      trunk: 'SIP-Main',
      status: 'unreachable',
      registered: false,
      down: ['SIP-Main'],
    });
    c.notice({ ...base, type: 'presence', extension: '101', status: 'do_not_disturb' });
    c.features = [
      { feature: 'sms', code: 30031, state: 'no-scope', reason: 'SMS is off.', remedy: 'Grant.' },
    ];
    for (const l of c.featureListeners) l(c.features);
    expect(t.views.notifier.notices.map((n) => n.alert.title)).toEqual([
      'Voicemail from Grace Hopper, 42 sec',
      'SMS from +1',
    ]);
    expect(t.runtime.history().map((e) => e.kind)).toEqual(['sms', 'voicemail']);
    expect(t.views.tray.last?.status).toMatchObject({
      state: 'connected',
      trunkWarning: { trunks: ['SIP-Main'] },
      presence: { label: 'Do not disturb', doNotDisturb: true },
      featureProblems: [{ feature: 'sms', remedy: 'Grant.' }],
    });
    // Turning SMS off is a new subscription: a new connection, and the old one's words are gone.
    await t.runtime.saveSettings({
      settings: { features: { voicemail: true, sms: false, trunk: true, presence: true } },
    });
    expect(t.connections).toHaveLength(2);
    expect(t.connections[1]?.config.settings.features.sms).toBe(false);
    expect(t.runtime.status().trunkWarning).toBeUndefined();
    expect(t.runtime.history()).toHaveLength(2);
  });

  it('needs onboarding without a secret and does not connect', async () => {
    const t = await setup(CONFIGURED);
    expect(await t.runtime.start()).toEqual({ needsOnboarding: true });
    expect(t.connections).toHaveLength(0);
    expect(t.runtime.status()).toMatchObject({
      state: 'needs-attention',
      remedy: expect.stringContaining('Settings'),
    });
  });

  it('pauses (connection stopped, cards cleared) and resumes (a new connection)', async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    await t.runtime.start();
    t.connections[0]?.pop('c1');
    expect(t.views.popup.visible).toBe(true);
    await t.runtime.setPaused(true);
    expect(t.connections[0]?.stopped).toBe(true);
    expect(t.views.popup.visible).toBe(false);
    expect(t.runtime.status()).toMatchObject({ state: 'offline', paused: true });
    t.runtime.wake('resume');
    expect(t.connections[0]?.wakes).toEqual([]);
    await t.runtime.setPaused(false);
    expect(t.connections).toHaveLength(2);
    t.runtime.wake('online');
    expect(t.connections[1]?.wakes).toEqual(['online']);
    await t.runtime.retryNow();
    expect(t.connections[1]?.retries).toBe(1);
    await t.runtime.setPaused(true);
    await t.runtime.retryNow(); // "try again" while paused resumes
    expect(t.runtime.isPaused()).toBe(false);
    expect(t.connections).toHaveLength(3);
  });

  it('after an unexpected error: says so in the status and rebuilds the connection (cards stay), at most every 30 s', async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    await t.runtime.start();
    t.connections[0]?.pop('c1');
    const fault = { origin: 'timer' as const, message: 'TypeError: x', at: 5, count: 1 };
    t.runtime.recoverFromFault(fault);
    await flushMicrotasks();
    expect(t.connections).toHaveLength(2);
    expect(t.connections[0]?.stopped).toBe(true);
    expect(t.connections[1]?.started).toBe(true);
    expect(t.views.popup.cards.map((c) => c.callId)).toEqual(['c1']);
    expect(t.runtime.status().fault).toEqual({ count: 1, at: 5 });
    expect(t.views.tray.last?.status.fault).toEqual({ count: 1, at: 5 });
    // Another one right after: counted and shown now, rebuilt once the 30 s are over.
    t.runtime.recoverFromFault({ ...fault, count: 2, at: 6 });
    await flushMicrotasks();
    expect(t.connections).toHaveLength(2);
    expect(t.runtime.status().fault).toEqual({ count: 2, at: 6 });
    await t.clock.advance(30_000);
    await flushMicrotasks();
    expect(t.connections).toHaveLength(3);
  });

  it('reconnects only when connection settings change', async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    await t.runtime.start();
    await t.runtime.setDoNotDisturb(true);
    expect(t.connections).toHaveLength(1);
    expect(t.runtime.status().doNotDisturb).toBe(true);
    expect(await t.runtime.saveSettings({ settings: { popupLingerSec: 9 } })).toMatchObject({
      ok: true,
    });
    expect(t.connections).toHaveLength(1);
    expect(
      await t.runtime.saveSettings({ settings: { extensions: ['101', '102'] } }),
    ).toMatchObject({ ok: true });
    expect(t.connections).toHaveLength(2);
    expect(t.connections[0]?.stopped).toBe(true);
  });

  it("forgets the old service's extension names when it connects to another service", async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    await t.runtime.start();
    await t.clock.advance(0);
    expect(t.runtime.directory.lookup('102')).toBe('Grace Hopper');
    await t.runtime.saveSettings({ settings: { popupLingerSec: 9 } });
    expect(t.runtime.directory.lookup('102')).toBe('Grace Hopper');
    const saved = await t.runtime.saveSettings({
      settings: { baseUrl: 'https://other.example.com' },
      secret: 'the-secret-2',
    });
    expect(saved).toMatchObject({ ok: true });
    expect(t.connections.at(-1)?.config.baseUrl).toBe('https://other.example.com');
    await t.clock.advance(0);
    expect(t.runtime.directory.lookup('102')).toBeNull();
  });

  it('stores a new secret only when the settings are valid, and reports a locked keychain plainly', async () => {
    const t = await setup({});
    await t.runtime.start();
    expect(
      await t.runtime.saveSettings({ settings: { baseUrl: 'ftp://x' }, secret: 'new-secret-1' }),
    ).toMatchObject({ ok: false, field: 'baseUrl' });
    expect(
      await t.credentials.getSecret(keychainAccount('key1', 'https://acme.example.com')),
    ).toBeNull();
    expect(
      await t.runtime.saveSettings({ settings: CONFIGURED, secret: 'new-secret-1' }),
    ).toMatchObject({ ok: true, view: { hasSecret: true, needsOnboarding: false } });
    expect(await t.credentials.getSecret(keychainAccount('key1', 'https://acme.example.com'))).toBe(
      'new-secret-1',
    );
    expect(t.connections).toHaveLength(1);

    expect(
      await t.runtime.saveSettings({ settings: { apiKey: '' }, secret: 'orphan-secret' }),
    ).toMatchObject({ ok: false, field: 'apiKey' });

    const locked = await setup({}, { failKeychain: true });
    await locked.runtime.start();
    expect(
      await locked.runtime.saveSettings({ settings: CONFIGURED, secret: 'new-secret-2' }),
    ).toMatchObject({
      ok: false,
      field: 'secret',
      message:
        'The system keychain refused the request. Unlock the system keychain (or sign in again), then try again.',
    });
    expect(JSON.stringify(locked.logger.records)).not.toContain('new-secret-2');
  });

  it('a keychain module that is not installed is said with its remedy when the secret is saved, never written elsewhere', async () => {
    const german = new LocaleState('de', silentLogger);
    const t = await setup({}, { extra: { words: german } });
    t.credentials.setSecret = () =>
      Promise.reject(
        new KeychainUnavailableError(
          'not-installed',
          "Cannot find package 'keytar' imported from /app/main.cjs",
          'linux',
        ),
      );
    await t.runtime.start();
    const saved = await t.runtime.saveSettings({ settings: CONFIGURED, secret: 'new-secret-3' });
    expect(saved).toMatchObject({ ok: false, field: 'secret' });
    // The window says the refusal's words in its language; `message` is their English (logs).
    const message = render((saved as { words: Words }).words, german.current());
    expect(message).toMatch(/^Das Schlüsselbund-Modul \(keytar\) ist nicht installiert/);
    expect(message).toContain('sudo apt-get install libsecret-1-dev');
    expect(JSON.stringify(t.logger.records)).not.toContain('new-secret-3');
  });

  it('resumes the demo at start-up when demo mode was on, keeping its key out of the settings and keychain', async () => {
    const t = await setup({ demoMode: true });
    expect(await t.runtime.start()).toEqual({ needsOnboarding: false });
    expect(t.connections[0]?.config.baseUrl).toBe('http://127.0.0.1:9');
    expect(t.connections[0]?.config.settings.extensions).toEqual(['101']);
    expect(await t.connections[0]?.config.credentials()).toEqual({
      key: 'demo-key',
      secret: 'demo-secret-xyz',
    });
    // A relay in demo mode is the simulator's, so its tenant is the simulator's, not a guess.
    expect(t.connections[0]?.config.settings.relayTenant).toBe('demo-tenant');
    expect(t.settings.current.apiKey).toBe('');
    expect(
      await t.credentials.getSecret(keychainAccount('demo-key', 'http://127.0.0.1:9')),
    ).toBeNull();
    expect(t.runtime.status().demo).toBe(true);
    // Settings that do not touch the service keep the demo.
    expect(await t.runtime.saveSettings({ settings: { popupLingerSec: 6 } })).toMatchObject({
      ok: true,
      view: { settings: { demoMode: true } },
    });
    expect(t.connections).toHaveLength(1);
    // Entering a real service address and key leaves the demo (the settings form never sends demoMode).
    await t.credentials.setSecret(
      keychainAccount('key1', 'https://acme.example.com'),
      'real-secret-1',
    );
    expect(await t.runtime.saveSettings({ settings: CONFIGURED })).toMatchObject({
      ok: true,
      view: { settings: { demoMode: false } },
    });
    expect(t.connections.at(-1)?.config.baseUrl).toBe('https://acme.example.com');
    expect(t.connections.at(-1)?.config.settings.relayTenant).toBe('');
    expect(t.runtime.status().demo).toBe(false);
  });

  it('history actions: copy a number, open the CRM with main’s builder, export CSV atomically', async () => {
    const t = await setup(
      { ...CONFIGURED, crmUrlTemplate: 'https://crm.example.com/find?n={from}&name={caller_name}' },
      { secret: 'the-secret-1' },
    );
    await t.runtime.start();
    t.connections[0]?.pop('c1');
    t.connections[0]?.pop('c2');
    expect(t.runtime.copyHistoryNumber('c1')).toBe(true);
    expect(t.views.clipboard.text).toBe('102');
    expect(t.runtime.copyHistoryNumber('gone')).toBe(false);
    expect(await t.runtime.openHistoryCrm('c2')).toEqual({ ok: true });
    expect(t.views.urlOpener.opened).toEqual([
      'https://crm.example.com/find?n=102&name=Grace%20Hopper',
    ]);
    expect((await t.runtime.openHistoryCrm('gone')).ok).toBe(false);

    const path = join(tmp.path, 'export', 'calls.csv');
    // Unknown and repeated ids are skipped; the order is the page's.
    expect(await t.runtime.exportHistoryCsv(path, ['c2', 'nope', 'c1', 'c2'])).toBe(2);
    const csv = await readFile(path, 'utf8');
    expect(csv.split('\r\n').map((line) => line.split(',')[7] ?? '')).toEqual([
      '"Call ID"',
      '"c2"',
      '"c1"',
      '',
    ]);
    expect((await readdir(join(tmp.path, 'export'))).sort()).toEqual(['calls.csv']);
  });

  it('saves a contacts file only when the user picked it in the dialog, and says what is in it', async () => {
    const t = await setup(CONFIGURED, { secret: 'the-secret-1' });
    await t.runtime.start();
    const good = join(tmp.path, 'contacts.csv');
    await writeFile(good, 'Name,Phone\nAda Lovelace,+1 415 555 0123\nGrace Hopper,205\n');
    const empty = join(tmp.path, 'notes.txt');
    await writeFile(empty, 'nothing to see');

    // A path the page sends without the dialog is refused, next to the field.
    expect(await t.runtime.saveSettings({ settings: { contactsFile: good } })).toMatchObject({
      ok: false,
      field: 'contactsFile',
    });
    expect(await t.runtime.pickContactsFile(empty)).toMatchObject({
      status: 'failed',
      path: empty,
      message: expect.stringContaining('No contacts found'),
    });
    expect(await t.runtime.pickContactsFile(join(tmp.path, 'missing.csv'))).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('could not be read'),
    });
    expect(await t.runtime.pickContactsFile(good)).toEqual({
      status: 'picked',
      path: good,
      contacts: 2,
    });
    // Picking does not change the names in use; saving does.
    expect(t.runtime.directory.lookup('205')).toBeNull();
    expect(await t.runtime.saveSettings({ settings: { contactsFile: good } })).toMatchObject({
      ok: true,
    });
    expect(t.runtime.directory.lookup('205')).toBe('Grace Hopper');
    // The file in force and "none" are always accepted.
    expect(await t.runtime.saveSettings({ settings: { contactsFile: good } })).toMatchObject({
      ok: true,
    });
    expect(await t.runtime.saveSettings({ settings: { contactsFile: '' } })).toMatchObject({
      ok: true,
    });
  });
});

describe("AppRuntime in the user's language", () => {
  it('says the connection status in the language in force, and again when it changes', async () => {
    const language = new LocaleState('de', silentLogger);
    const t = await setup(CONFIGURED, { secret: 's3cret-x', extra: { words: language } });
    await t.runtime.start();
    const c = t.connections[0]!;
    c.status(saidStatus('offline', [phrase('status.cannot-reach')], faultWords('network').remedy));
    expect(t.runtime.status()).toMatchObject({
      state: 'offline',
      reason: 'Der Dienst ist nicht erreichbar; neuer Versuch folgt.',
    });
    expect(t.runtime.status().remedy).toMatch(/^Prüfen Sie die Netzwerkverbindung/);
    const heard: string[] = [];
    t.runtime.onStatus((s) => heard.push(s.reason ?? ''));
    language.set('ar');
    t.runtime.languageChanged();
    expect(heard).toEqual(['تعذّر الوصول إلى الخدمة؛ جارٍ إعادة المحاولة.']);
    expect(t.views.tray.last?.status.reason).toBe(heard[0]);
    await t.runtime.shutdown();
  });

  it('says what the desktop side found wrong (the popup), in the language in force, until it is over', async () => {
    const language = new LocaleState('fr', silentLogger);
    const health = new DesktopHealth(silentLogger);
    const t = await setup(CONFIGURED, { secret: 's3cret-x', extra: { words: language, health } });
    await t.runtime.start();
    expect(t.runtime.status().desktopProblems).toBeUndefined();
    health.report('popup', {
      reason: [phrase('desktop.problem.popup.reason')],
      remedy: [phrase('desktop.problem.popup.remedy')],
    });
    expect(t.views.tray.last?.status.desktopProblems).toEqual([
      {
        id: 'popup',
        reason: 'La fenêtre d’appel n’a pas pu s’afficher.',
        remedy: expect.stringMatching(/^Les notifications affichent toujours chaque appel/),
      },
    ]);
    language.set('en');
    t.runtime.languageChanged();
    expect(t.views.tray.last?.status.desktopProblems?.[0]?.reason).toBe(
      'The call popup could not be shown.',
    );
    health.clear('popup');
    expect(t.views.tray.last?.status.desktopProblems).toBeUndefined();
    await t.runtime.shutdown();
  });
});

describe('AppRuntime: the call log in the Settings status (issue 39 item 4)', () => {
  const record = (n: number) => ({
    callId: `call-${n}`,
    direction: 'inbound' as const,
    from: '+4930123456',
    to: '101',
    extension: '101',
    startedAt: 1_000,
    endedAt: 2_000,
    durationMs: 0,
    outcome: 'missed' as const,
    note: 'secret note',
  });

  it('says calls are waiting and for how long, then a 403 stop in words with its remedy; never a number, note or call id', async () => {
    const clock = new FakeClock();
    let refuse = false;
    const queue = new CallLogQueue({
      folder: join(tmp.path, 'call-log'),
      clock,
      logger: silentLogger,
      writer: {
        kind: 'hubspot',
        // The far side: HubSpot times out first, then refuses the token's missing write scope.
        create: () =>
          refuse
            ? Promise.reject(new CrmError('forbidden', 'missing scope', { status: 403 }))
            : Promise.reject(new CrmError('timeout', 'no answer')),
        update: () => Promise.resolve(),
        find: () => Promise.resolve(null),
      },
    });
    await queue.start();
    const language = new LocaleState('en', silentLogger);
    const t = await setup(CONFIGURED, {
      secret: 's3cret-x',
      extra: { words: language, callLog: queue, callLogStatus: queue },
    });
    await t.runtime.start();
    expect(t.runtime.status().callLog).toBeUndefined();
    await queue.log(record(1));
    await queue.log(record(2));
    await clock.advance(2 * 60_000);
    expect(t.runtime.status().callLog).toEqual({
      waiting: '2 calls are waiting to be logged in the CRM; the oldest for 2 min.',
    });
    refuse = true;
    queue.online();
    await advanceWithRealIo(clock, 6 * 60_000, 30_000);
    // The queue's journal is written to disk (real I/O): on a loaded machine the 403 may land
    // after the steps above (a CI run read no problem yet). A bounded wait, the fake clock on by
    // a second at a time so a retry it scheduled late still comes.
    for (let i = 0; i < 100 && !t.runtime.status().callLog?.problem; i++)
      await advanceWithRealIo(clock, 1_000, 1_000).then(
        () => new Promise((r) => setTimeout(r, 20)),
      );
    const view = t.runtime.status().callLog;
    expect(view?.problem).toEqual({
      reason:
        'Calls are not being logged: the CRM token may not write calls (a missing write scope).',
      remedy:
        'Give the token the scope to write calls (HubSpot: crm.objects.contacts.write) or enter one that has it in Settings.',
    });
    expect(view?.waiting).toMatch(/^2 calls are waiting .* the oldest for 8 min/);
    language.set('fr');
    expect(t.runtime.status().callLog?.problem?.reason).toMatch(
      /^Les appels ne sont pas enregistrés/,
    );
    const json = JSON.stringify(t.runtime.status());
    for (const secret of ['4930123456', 'secret note', 'call-1'])
      expect(json).not.toContain(secret);
    await t.runtime.shutdown();
    queue.close();
  });

  it('pushes the call-log status as the queue changes (queued, paused by a 429, logged, stopped by a 403), without asking again', async () => {
    const clock = new FakeClock();
    const answers: Array<() => Promise<string>> = [
      // The far side: HubSpot's secondly limit first (Retry-After 60 s), then the call is written.
      () =>
        Promise.reject(new CrmError('rate-limited', '429', { status: 429, retryAfterMs: 60_000 })),
      () => Promise.resolve('9001'),
      // The second call: the token lacks the write scope.
      () => Promise.reject(new CrmError('forbidden', 'missing scope', { status: 403 })),
    ];
    const queue = new CallLogQueue({
      folder: join(tmp.path, 'call-log-pushes'),
      clock,
      logger: silentLogger,
      writer: {
        kind: 'hubspot',
        create: () => (answers.shift() ?? (() => Promise.resolve('9002')))(),
        update: () => Promise.resolve(),
        find: () => Promise.resolve(null),
      },
    });
    await queue.start();
    const t = await setup(CONFIGURED, {
      secret: 's3cret-x',
      extra: { callLog: queue, callLogStatus: queue },
    });
    await t.runtime.start();
    // What the Settings window is sent ('status:changed'), as main.ts forwards runtime.onStatus.
    const pushed: Array<StatusView['callLog']> = [];
    t.runtime.onStatus((s) => pushed.push(s.callLog));
    const last = () => pushed.at(-1);
    /** Moves the queue's clock in small steps, letting its file writes land, until `done`. */
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 4_000 && !done(); i++) {
        await clock.advance(50);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(done()).toBe(true);
    };
    await queue.log(record(1));
    expect(last()?.waiting).toMatch(/^1 call is waiting to be logged/);
    await until(() => last()?.paused !== undefined);
    expect(last()?.paused).toMatch(/logging calls waits until about .* and tries again by itself/);
    await until(() => pushed.length > 0 && last() === undefined);
    await queue.log(record(2));
    await until(() => last()?.problem !== undefined);
    expect(last()?.problem?.reason).toBe(
      'Calls are not being logged: the CRM token may not write calls (a missing write scope).',
    );
    await t.runtime.shutdown();
    queue.close();
  });

  it('says which wait it is: a short rate limit, the daily quota, a server error (5xx) backed off', async () => {
    const clock = new FakeClock();
    const answers: Array<() => Promise<string>> = [
      // The far side, as the writers throw it: HubSpot's secondly limit (429, 1 s), its daily
      // quota (429 DAILY, an hour), then a 503 from the CRM; each time the call is written after.
      () =>
        Promise.reject(new CrmError('rate-limited', '429', { status: 429, retryAfterMs: 1_000 })),
      () => Promise.resolve('9001'),
      () =>
        Promise.reject(
          new CrmError('rate-limited', '429', { status: 429, retryAfterMs: 3600_000, daily: true }),
        ),
      () => Promise.resolve('9002'),
      () => Promise.reject(new CrmError('server', 'the CRM answered 503', { status: 503 })),
      () => Promise.resolve('9003'),
    ];
    const queue = new CallLogQueue({
      folder: join(tmp.path, 'call-log-waits'),
      clock,
      logger: silentLogger,
      writer: {
        kind: 'hubspot',
        create: () => (answers.shift() ?? (() => Promise.resolve('9009')))(),
        update: () => Promise.resolve(),
        find: () => Promise.resolve(null),
      },
    });
    await queue.start();
    const language = new LocaleState('en', silentLogger);
    const t = await setup(CONFIGURED, {
      secret: 's3cret-x',
      extra: { words: language, callLog: queue, callLogStatus: queue },
    });
    await t.runtime.start();
    const paused = () => t.runtime.status().callLog?.paused;
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 4_000 && !done(); i++) {
        await clock.advance(50);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(done()).toBe(true);
    };
    await queue.log(record(1));
    await until(() => paused() !== undefined);
    expect(paused()).toMatch(
      /^The CRM asked to slow down \(a rate limit\): logging calls waits until about .+ and tries again by itself\.$/,
    );
    expect(paused()).not.toMatch(/daily/);
    await until(() => paused() === undefined);
    await queue.log(record(2));
    await until(() => paused() !== undefined);
    expect(paused()).toMatch(/^The CRM's daily limit is reached: logging calls waits until about /);
    language.set('de');
    expect(paused()).toMatch(/^Das Tageslimit des CRM ist erreicht/);
    language.set('en');
    for (let i = 0; i < 80 && paused() !== undefined; i++)
      await advanceWithRealIo(clock, 60_000, 5_000);
    expect(paused()).toBeUndefined();
    await queue.log(record(3));
    await until(() => paused() !== undefined);
    expect(paused()).toMatch(
      /^The CRM answered with an error: logging calls tries again at about .+ by itself\.$/,
    );
    await until(() => paused() === undefined);
    await t.runtime.shutdown();
    queue.close();
  });
});
