/**
 * Organisation mode in the app's core (AppRuntime, what Settings' "Sign in with your
 * organisation", "Enrol", "Sign out" and "Test connection" call, and what the status, the tray
 * and the popup then show), against the relay itself (users mode, in this process) and a real
 * OpenID provider (oidc-provider on 127.0.0.1) whose login page the test answers as a person would.
 * The connection is the one the app builds (withOrganisationMode over the API-key factory).
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import { settingsPortFor } from '../../src-main/core/settings-service/settings-port.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { OrganisationAccount } from '../../src-main/core/org/org-account.ts';
import { withOrganisationMode } from '../../src-main/core/org/org-connection.ts';
import { orgKeychainAccount } from '../../src-main/core/org/org-token-source.ts';
import { SettingsStore } from '../../src-main/core/settings/settings-store.ts';
import { validatePolicy } from '../../src-main/core/settings/policy.ts';
import type { Settings } from '../../src-main/core/settings/types.ts';
import {
  DESKTOP_CLIENT_ID,
  startOidcProvider,
  type OidcProviderHandle,
} from '../../rigs/oidc-provider.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';
import type { CallLogSink } from '../../src-main/core/ports/call-log.ts';
import { addUser, orgConfig, postAll, startOrgRelay } from '../../rigs/relay/users-support.ts';
import {
  FakeClipboard,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  FakeTray,
  RecordingCallLog,
} from '../../rigs/app-harness.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import { newEnrolmentCode, secretHash } from '../../src-relay/users/secrets.ts';
import { CLAIM_DEVICE_FILE, ClaimDeviceStore } from '../../src-main/core/org/claim-device.ts';

const tmp = useTempDir('app-organisation-');
let idp: OidcProviderHandle;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  idp = await startOidcProvider({ accounts: { alice: { email: 'alice@example.org' } } });
});
afterAll(async () => {
  await idp?.close();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const API_KEY_MODE = {
  baseUrl: 'https://acme.example.com',
  apiKey: 'ak_live_acme',
  extensions: ['102'],
};

/** What a computer keeps across a restart of the app (and the relay it was enrolled at). */
interface Computer {
  org: Awaited<ReturnType<typeof startOrgRelay>>;
  code: string;
  keychain: MemoryCredentialStore;
  settingsFile: string;
  historyFile: string;
}

/** The relay with users (alice by e-mail, reception by code), and the app beside it. */
async function setUp(
  options: {
    sso?: boolean;
    browser?: (url: string) => Promise<void> | void;
    provider?: OidcProviderHandle;
    /** The organisation's policy (policy.json) on this computer. */
    policy?: Record<string, unknown>;
    /** The relay's clients.authMaxAgeMs: how long after its issue an ID token's session lasts. */
    authMaxAgeMs?: number;
    /** Another computer beside one setUp made: the same relay, enrolled as this user. */
    beside?: {
      org: Awaited<ReturnType<typeof startOrgRelay>>;
      user: string;
      extension: string;
      /** The user is already there (a second computer of theirs): only a new code is issued. */
      again?: boolean;
    };
    /** Where the app logs calls (with "answered and missed"). */
    callLog?: CallLogSink;
    /** The phone system in the settings (Yeastar: the desktop asks the relay for call records). */
    phoneSystem?: Settings['phoneSystem'];
    /**
     * The app's data folder: the computer's id for call claims is loaded from it (made there the
     * first time) as the composition root does (src-main/electron/main.ts).
     */
    dataFolder?: string;
    /** The same computer started again: its relay, keychain, settings and history files. */
    restartOf?: Computer;
  } = {},
) {
  const provider = options.provider ?? idp;
  const config = orgConfig(join(tmp.path, 'users.json'));
  if (options.authMaxAgeMs) config.clients.authMaxAgeMs = options.authMaxAgeMs;
  if (options.sso !== false)
    config.tenants.acme!.oidc = {
      issuer: provider.issuer,
      clientId: DESKTOP_CLIENT_ID,
      scopes: ['openid', 'email', 'offline_access'],
      emailClaim: 'email',
      clockToleranceSec: 0,
      users: {},
    };
  let org: Awaited<ReturnType<typeof startOrgRelay>>;
  let code: string;
  if (options.restartOf) {
    org = options.restartOf.org;
    code = options.restartOf.code;
  } else if (options.beside) {
    org = options.beside.org;
    if (options.beside.again) {
      code = newEnrolmentCode();
      await org.users.issueCode(
        'acme',
        options.beside.user,
        secretHash(code),
        3_600_000,
        Date.now(),
      );
    } else code = await addUser(org.users, options.beside.user, [options.beside.extension]);
  } else {
    const started = await startOrgRelay(config);
    org = started;
    cleanups.push(() => started.close());
    await org.users.addUser(
      { tenant: 'acme', name: 'alice', extensions: ['101'], dids: [], email: 'alice@example.org' },
      Date.now(),
    );
    code = await addUser(org.users, 'reception', ['103']);
  }

  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const keychain = options.restartOf?.keychain ?? new MemoryCredentialStore();
  // The computer was in API-key mode: its key's secret is in the keychain.
  if (!options.restartOf)
    await keychain.setSecret(keychainAccount(API_KEY_MODE.apiKey, API_KEY_MODE.baseUrl), 'S3cr3t!');
  const network = (s: Pick<Settings, 'proxyMode' | 'proxyUrl' | 'caFile'>) =>
    transportFor(s, { logger, secrets, readFile: () => '' });
  const pages: Promise<string>[] = [];
  const account = new OrganisationAccount({
    store: keychain,
    clock: systemClock,
    logger,
    secrets,
    network,
    openBrowser: async (url) => {
      if (options.browser) return options.browser(url);
      pages.push(provider.signIn(url, 'alice'));
    },
    deviceLabel: 'Screenpop on test-pc',
    browserPage: (outcome) => (outcome === 'signed-in' ? 'Signed in, close this tab.' : 'Failed.'),
    testTimeoutMs: 10_000,
  });
  const settingsFile =
    options.restartOf?.settingsFile ?? join(tmp.path, `settings-${cleanups.length}.json`);
  const historyFile =
    options.restartOf?.historyFile ?? join(tmp.path, `history-${cleanups.length}.json`);
  const store = new SettingsStore({ path: settingsFile, logger });
  await store.load();
  if (!options.restartOf)
    await store.update({
      ...API_KEY_MODE,
      ...(options.callLog && { callLogCalls: 'answered-and-missed' as const }),
      ...(options.phoneSystem && { phoneSystem: options.phoneSystem }),
    });
  const claimDevice = options.dataFolder
    ? await new ClaimDeviceStore({
        path: join(options.dataFolder, CLAIM_DEVICE_FILE),
        logger,
      }).load()
    : undefined;
  const popup = new FakePopup();
  const tray = new FakeTray();
  const runtime = new AppRuntime({
    clock: systemClock,
    logger,
    secrets,
    settings: settingsPortFor(store, logger, validatePolicy(options.policy ?? {}).policy),
    credentials: keychain,
    history: new HistoryStore({
      path: historyFile,
      clock: systemClock,
      logger,
      limit: 50,
    }),
    views: {
      notifier: new FakeNotifier(),
      popup,
      urlOpener: new FakeOpener(),
      clipboard: new FakeClipboard(),
      tray,
    },
    connect: withOrganisationMode(
      serviceConnectionFactory({ clock: systemClock, logger, secrets, transport: network }),
      { clock: systemClock, logger, transport: network, account, heartbeatMs: 2_000 },
    ),
    organisation: account,
    crmNetwork: network,
    ...(options.callLog && { callLog: options.callLog }),
    ...(claimDevice !== undefined && { claimDevice }),
    startDemo: () => Promise.reject(new Error('no demo here')),
    createProbe: () => ({
      getToken: () => Promise.reject(new Error('the phone system is not asked in this test')),
      listExtensions: async () => [],
    }),
  });
  cleanups.push(() => runtime.shutdown());
  const relayAddress = org.relay.url.replace(/^http/, 'ws');
  // A ring now (an old one would be stale and never pop).
  const ring = (to: string, id: string, state = 'ringing') =>
    postAll(org.relay.webhookUrl('acme'), [
      JSON.stringify({
        event: 30011,
        timestamp: Date.now(),
        tenant: 'acme',
        event_id: state === 'ringing' ? `${id}-${to}` : `${id}-${to}-${state}`,
        data: { call_id: id, from: '+442071234567', to, state },
      }),
    ]);
  return {
    org,
    code,
    keychain,
    secrets,
    runtime,
    popup,
    tray,
    pages,
    relayAddress,
    ring,
    logger,
    settingsFile,
    historyFile,
  };
}

describe('organisation mode in the app', () => {
  it('signs in through the browser: the API key and secret leave the computer, only the user’s own rings pop, the status and Test connection say who; sign-out stops the calls and says what to do', async () => {
    const t = await setUp();
    await t.runtime.start();
    const result = await t.runtime.signInToOrganisation({
      relayUrl: t.relayAddress,
      relayTenant: 'acme',
    });
    expect(result).toMatchObject({ ok: true });
    expect(await t.pages[0]).toBe('Signed in, close this tab.');
    const view = t.runtime.settingsView();
    expect(view.settings.connectionMode).toBe('organisation');
    expect(view.settings.apiKey).toBe('');
    expect(view.organisation).toEqual({ signedIn: { via: 'oidc', email: 'alice@example.org' } });
    expect(view.needsOnboarding).toBe(false);
    // No API secret on the machine: the keychain holds the organisation's sign-in only.
    expect(
      await t.keychain.getSecret(keychainAccount(API_KEY_MODE.apiKey, API_KEY_MODE.baseUrl)),
    ).toBeNull();
    expect(await t.keychain.getSecret(orgKeychainAccount(t.relayAddress, 'acme'))).toContain(
      '"kind":"oidc"',
    );

    await waitFor(() => t.runtime.status().state === 'connected', 'connected', {
      timeoutMs: 15_000,
    });
    await waitFor(() => t.runtime.status().organisation?.user !== null, 'the identity');
    expect(t.runtime.status().organisation).toEqual({
      user: 'alice',
      via: 'oidc',
      extensions: ['101'],
      signInNeeded: false,
    });
    expect(t.tray.last?.status.organisation?.user).toBe('alice');

    // The settings still say extension 102 (API-key mode's): the relay's identity decides.
    await t.ring('102', 'ring-102');
    await t.ring('103', 'ring-103');
    await t.ring('101', 'ring-101');
    await waitFor(() => t.popup.cards.length > 0, 'a pop');
    expect(t.popup.cards.map((c) => c.callId)).toEqual(['ring-101']);

    const test = await t.runtime.testConnection({ settings: {} });
    expect(test).toEqual({
      ok: true,
      message:
        'Signed in to acme as alice (single sign-on). Calls to extension 101 come to this computer.',
    });

    const out = await t.runtime.signOutOfOrganisation();
    expect(out.organisation).toEqual({ signedIn: null });
    expect(out.needsOnboarding).toBe(true);
    expect(await t.keychain.getSecret(orgKeychainAccount(t.relayAddress, 'acme'))).toBeNull();
    const status = t.runtime.status();
    expect(status.state).toBe('needs-attention');
    expect(status.reason).toBe('Not signed in to your organisation.');
    expect(status.organisation?.signInNeeded).toBe(true);
    const untested = await t.runtime.testConnection({ settings: {} });
    expect(untested).toMatchObject({ ok: false, message: 'Not signed in to your organisation.' });
    // Nothing secret reached the log.
    const logged = JSON.stringify(t.logger.records);
    expect(logged).not.toContain('S3cr3t!');
    expect(logged).not.toMatch(/eyJ[\w-]{10,}\./);
  }, 60_000);

  it('enrols with a one-time code (a wrong code says why and changes nothing), then pops that user’s rings only', async () => {
    const t = await setUp({ sso: false });
    await t.runtime.start();
    const wrong = await t.runtime.enrolInOrganisation(
      { relayUrl: t.relayAddress, relayTenant: 'acme' },
      'ABCD-EFGH-JKMN',
    );
    expect(wrong).toMatchObject({ ok: false });
    expect(!wrong.ok && wrong.message).toMatch(/^The relay did not accept the enrolment code/);
    expect(!wrong.ok && wrong.remedy).toMatch(/ask your administrator for a new one/);
    expect(t.runtime.settings().connectionMode).toBe('api-key');
    expect(
      await t.keychain.getSecret(keychainAccount(API_KEY_MODE.apiKey, API_KEY_MODE.baseUrl)),
    ).toBe('S3cr3t!');

    // Single sign-on is not offered by this relay: the words send the user to the code.
    const sso = await t.runtime.signInToOrganisation({
      relayUrl: t.relayAddress,
      relayTenant: 'acme',
    });
    expect(sso).toEqual({
      ok: false,
      message: 'The relay offers no single sign-on for “acme”.',
      remedy: 'Enrol this computer with the code your administrator gave you.',
    });

    const enrolled = await t.runtime.enrolInOrganisation(
      { relayUrl: t.relayAddress, relayTenant: 'acme' },
      t.code,
    );
    expect(enrolled).toMatchObject({ ok: true });
    expect(t.runtime.settingsView().organisation).toEqual({
      signedIn: { via: 'device', email: null },
    });
    expect(t.secrets.scrub(`code ${t.code}`)).not.toContain(t.code);
    await waitFor(() => t.runtime.status().organisation?.user === 'reception', 'identity', {
      timeoutMs: 15_000,
    });
    await t.ring('101', 'for-alice');
    await t.ring('103', 'for-reception');
    await waitFor(() => t.popup.cards.length > 0, 'a pop');
    expect(t.popup.cards.map((c) => c.callId)).toEqual(['for-reception']);

    // Calls go through the relay (issue 38 item 5): offered until it says this tenant has none
    // (it is no gateway here: docs/relay-protocol.md 2.5), in the direct mode's words.
    const calls = t.runtime.callControl();
    expect([...calls.offered()].sort()).toEqual(['dial', 'hangup', 'transfer']);
    expect(await calls.dial('4155550199')).toMatchObject({
      ok: false,
      refusal: 'not-offered',
      message: 'Calling from Screenpop is not offered by this phone system.',
    });
    expect([...calls.offered()]).toEqual([]);
  }, 60_000);

  it('a queue’s call rings on two enrolled computers and nobody takes it: logged as missed by exactly one (claimed at the relay)', async () => {
    const logA = new RecordingCallLog();
    const logB = new RecordingCallLog();
    const a = await setUp({ sso: false, callLog: logA });
    const b = await setUp({
      sso: false,
      callLog: logB,
      beside: { org: a.org, user: 'sales', extension: '104' },
    });
    for (const t of [a, b]) {
      await t.runtime.start();
      const enrolled = await t.runtime.enrolInOrganisation(
        { relayUrl: t.relayAddress, relayTenant: 'acme' },
        t.code,
      );
      expect(enrolled).toMatchObject({ ok: true });
    }
    await waitFor(() => a.runtime.status().organisation?.user === 'reception', 'a signed in', {
      timeoutMs: 15_000,
    });
    await waitFor(() => b.runtime.status().organisation?.user === 'sales', 'b signed in', {
      timeoutMs: 15_000,
    });
    for (const id of ['q-1', 'q-2', 'q-3']) {
      await a.ring('103', id);
      await a.ring('104', id);
    }
    await waitFor(() => a.popup.cards.length === 3 && b.popup.cards.length === 3, 'both pop');
    for (const id of ['q-1', 'q-2', 'q-3']) {
      await a.ring('103', id, 'ended');
      await a.ring('104', id, 'ended');
    }
    const logged = () => [...logA.records, ...logB.records];
    await waitFor(() => logged().length >= 3, 'three calls logged', { timeoutMs: 10_000 });
    await sleepReal(500);
    expect(
      logged()
        .map((r) => [r.callId, r.outcome])
        .sort(),
    ).toEqual([
      ['q-1', 'missed'],
      ['q-2', 'missed'],
      ['q-3', 'missed'],
    ]);
  }, 60_000);

  it('an outbound call of reception on Yeastar (its 30012 record from 103): logged once, as OUTBOUND, by one of reception’s two computers; a colleague’s logs nothing', async () => {
    const logA1 = new RecordingCallLog();
    const logA2 = new RecordingCallLog();
    const logB = new RecordingCallLog();
    const phoneSystem = 'yeastar-p-series' as const;
    const a1 = await setUp({ sso: false, callLog: logA1, phoneSystem });
    const a2 = await setUp({
      sso: false,
      callLog: logA2,
      phoneSystem,
      beside: { org: a1.org, user: 'reception', extension: '103', again: true },
    });
    const b = await setUp({
      sso: false,
      callLog: logB,
      phoneSystem,
      beside: { org: a1.org, user: 'sales', extension: '104' },
    });
    for (const t of [a1, a2, b]) {
      await t.runtime.start();
      const enrolled = await t.runtime.enrolInOrganisation(
        { relayUrl: t.relayAddress, relayTenant: 'acme' },
        t.code,
      );
      expect(enrolled).toMatchObject({ ok: true });
    }
    for (const [t, user] of [
      [a1, 'reception'],
      [a2, 'reception'],
      [b, 'sales'],
    ] as const)
      await waitFor(() => t.runtime.status().organisation?.user === user, `${user} signed in`, {
        timeoutMs: 15_000,
      });
    // The core's call record as the relay's Yeastar intake makes it of a captured Outbound 30012
    // (captured-30012-D2-outbound-busy.json, answered here): 103 called an outside number.
    await postAll(a1.org.relay.webhookUrl('acme'), [
      JSON.stringify({
        event: 30012,
        timestamp: Date.now(),
        tenant: 'acme',
        event_id: 'rec-out-1',
        data: {
          call_id: 'out-1',
          to: '0875550199',
          from: '103',
          direction: 'outbound',
          status: 'ANSWERED',
          talk_sec: 42,
          duration_sec: 50,
        },
      }),
    ]);
    const logged = () => [...logA1.records, ...logA2.records, ...logB.records];
    await waitFor(() => logged().length >= 1, 'the outbound call logged', { timeoutMs: 10_000 });
    await sleepReal(800);
    expect(logged()).toEqual([
      expect.objectContaining({ callId: 'out-1', direction: 'outbound', outcome: 'answered' }),
    ]);
    expect(logB.records).toEqual([]);
  }, 60_000);

  it('a computer restarted claims again the calls it claimed before (its id for claims is kept in its data folder): a voicemail after the missed call updates the logged call', async () => {
    const dataFolder = join(tmp.path, 'userData');
    const before = new RecordingCallLog();
    const phoneSystem = 'yeastar-p-series' as const;
    const a = await setUp({ sso: false, callLog: before, phoneSystem, dataFolder });
    await a.runtime.start();
    expect(
      await a.runtime.enrolInOrganisation(
        { relayUrl: a.relayAddress, relayTenant: 'acme' },
        a.code,
      ),
    ).toMatchObject({ ok: true });
    await waitFor(() => a.runtime.status().organisation?.user === 'reception', 'signed in', {
      timeoutMs: 15_000,
    });
    // A call rings on reception's 103 and nobody takes it: claimed at the relay, logged as missed.
    await a.ring('103', 'vm-1');
    await waitFor(() => a.popup.cards.length === 1, 'the ring pops');
    await a.ring('103', 'vm-1', 'ended');
    await waitFor(() => before.records.length === 1, 'the missed call logged', {
      timeoutMs: 10_000,
    });
    expect(before.records[0]).toMatchObject({ callId: 'vm-1', outcome: 'missed' });
    // The app quits and starts again (an update, a reboot): same keychain, settings and data folder.
    await a.runtime.shutdown();
    const after = new RecordingCallLog();
    const again = await setUp({ restartOf: a, callLog: after, dataFolder });
    await again.runtime.start();
    await waitFor(
      () => again.runtime.status().organisation?.user === 'reception',
      'signed in again',
      { timeoutMs: 15_000 },
    );
    // Yeastar's call record comes after: the caller left a voicemail. The same call, updated.
    await postAll(a.org.relay.webhookUrl('acme'), [
      JSON.stringify({
        event: 30012,
        timestamp: Date.now(),
        tenant: 'acme',
        event_id: 'rec-vm-1',
        data: {
          call_id: 'vm-1',
          from: '+442071234567',
          to: '103',
          direction: 'inbound',
          status: 'VOICEMAIL',
          talk_sec: 0,
          duration_sec: 30,
        },
      }),
    ]);
    await waitFor(() => after.records.length === 1, 'the voicemail logged by the same computer', {
      timeoutMs: 10_000,
      // On a computer whose id was per start: "call logged by a colleague's app", nothing logged.
      detail: () =>
        JSON.stringify(again.logger.records.filter((r) => /call/.test(r.msg)).map((r) => r.msg)),
    });
    expect(after.records[0]).toMatchObject({ callId: 'vm-1', outcome: 'voicemail' });
    expect(again.logger.records.map((r) => r.msg)).not.toContain(
      'call logged by a colleague’s app',
    );
  }, 60_000);

  it('when the provider no longer renews the sign-in: needs attention, "sign in again" in the status and the tray; signing in again brings the calls back', async () => {
    // A relay whose sessions last 4 s after the ID token was issued: it ends each one (4002),
    // and the app renews at the provider.
    const shortLived = await startOidcProvider({
      accounts: { alice: { email: 'alice@example.org' } },
      idTokenTtlSec: 4,
    });
    cleanups.push(() => shortLived.close());
    const t = await setUp({ provider: shortLived, authMaxAgeMs: 4_000 });
    await t.runtime.start();
    const relay = { relayUrl: t.relayAddress, relayTenant: 'acme' };
    expect(await t.runtime.signInToOrganisation(relay)).toMatchObject({ ok: true });
    await waitFor(() => t.runtime.status().organisation?.user === 'alice', 'signed in', {
      timeoutMs: 15_000,
    });
    // The organisation ends the grant at its provider (a password change, an administrator).
    const kept = JSON.parse(
      (await t.keychain.getSecret(orgKeychainAccount(t.relayAddress, 'acme')))!,
    ) as { refreshToken: string };
    await (await shortLived.provider.RefreshToken.find(kept.refreshToken))!.destroy();

    await waitFor(() => t.runtime.status().state === 'needs-attention', 'needs attention', {
      timeoutMs: 20_000,
    });
    const status = t.runtime.status();
    expect(status).toMatchObject({
      reason: 'Your sign-in with your organisation has ended.',
      remedy: 'Sign in again with your organisation in Settings.',
      organisation: { signInNeeded: true },
    });
    expect(t.tray.last?.status.organisation?.signInNeeded).toBe(true);

    expect(await t.runtime.signInToOrganisation(relay)).toMatchObject({ ok: true });
    await waitFor(() => t.runtime.status().state === 'connected', 'connected again', {
      timeoutMs: 15_000,
    });
    expect(t.runtime.status().organisation?.signInNeeded).toBe(false);
  }, 60_000);

  it('a computer its policy puts in organisation mode loses the API key and secret at start, and a save cannot store a secret again', async () => {
    const t = await setUp({
      policy: { settings: { connectionMode: 'organisation' }, locked: ['connectionMode'] },
    });
    expect(await t.runtime.start()).toEqual({ needsOnboarding: true });
    expect(t.runtime.settings()).toMatchObject({ connectionMode: 'organisation', apiKey: '' });
    expect(
      await t.keychain.getSecret(keychainAccount(API_KEY_MODE.apiKey, API_KEY_MODE.baseUrl)),
    ).toBeNull();
    expect(t.runtime.status()).toMatchObject({
      state: 'needs-attention',
      reason: 'Not signed in to your organisation.',
      organisation: { user: null, signInNeeded: true },
    });
    const saved = await t.runtime.saveSettings({
      settings: { relayUrl: t.relayAddress, relayTenant: 'acme', apiKey: 'ak_again' },
      secret: 'S3cr3t!',
    });
    expect(saved).toEqual({
      ok: false,
      field: 'secret',
      words: [phrase('status.org.no-api-secret')],
      message: 'In organisation mode this computer keeps no API secret.',
    });
    // Without the secret, the relay is saved and the key is dropped again.
    expect(
      await t.runtime.saveSettings({
        settings: { relayUrl: t.relayAddress, relayTenant: 'acme', apiKey: 'ak_again' },
      }),
    ).toMatchObject({ ok: true, view: { settings: { apiKey: '', relayTenant: 'acme' } } });
    expect(
      await t.keychain.getSecret(keychainAccount('ak_again', API_KEY_MODE.baseUrl)),
    ).toBeNull();
  }, 30_000);

  it('a policy that locks API-key mode: signing in is refused at the mode, nothing is stored', async () => {
    const t = await setUp({
      policy: { settings: { connectionMode: 'api-key' }, locked: ['connectionMode'] },
    });
    await t.runtime.start();
    expect(
      await t.runtime.signInToOrganisation({ relayUrl: t.relayAddress, relayTenant: 'acme' }),
    ).toMatchObject({ ok: false, field: 'connectionMode' });
    expect(await t.keychain.getSecret(orgKeychainAccount(t.relayAddress, 'acme'))).toBeNull();
    expect(t.runtime.settings().connectionMode).toBe('api-key');
  });

  it('a Save that switches to organisation mode keeps the API key and secret until this computer is signed in', async () => {
    const t = await setUp();
    await t.runtime.start();
    const account = keychainAccount(API_KEY_MODE.apiKey, API_KEY_MODE.baseUrl);
    const saved = await t.runtime.saveSettings({
      settings: { connectionMode: 'organisation', relayUrl: t.relayAddress, relayTenant: 'acme' },
    });
    expect(saved).toMatchObject({ ok: true, view: { settings: { apiKey: API_KEY_MODE.apiKey } } });
    expect(await t.keychain.getSecret(account)).toBe('S3cr3t!');
    // Changing their mind brings back what they had, key and secret.
    expect(await t.runtime.saveSettings({ settings: { connectionMode: 'api-key' } })).toMatchObject(
      { ok: true, view: { settings: { apiKey: API_KEY_MODE.apiKey } } },
    );
    expect(await t.keychain.getSecret(account)).toBe('S3cr3t!');
    // Signed in, the key and secret leave the computer.
    expect(
      await t.runtime.signInToOrganisation({ relayUrl: t.relayAddress, relayTenant: 'acme' }),
    ).toMatchObject({ ok: true });
    expect(t.runtime.settings().apiKey).toBe('');
    expect(await t.keychain.getSecret(account)).toBeNull();
  }, 30_000);

  it('says plainly what is wrong with the relay address or tenant, and a sign-in the person cancels ends at once', async () => {
    let opened = '';
    const t = await setUp({ browser: (url) => void (opened = url) });
    await t.runtime.start();
    expect(
      await t.runtime.signInToOrganisation({ relayUrl: '', relayTenant: 'acme' }),
    ).toMatchObject({
      ok: false,
      field: 'relayUrl',
      message: 'Enter the relay address your administrator gave you.',
    });
    expect(
      await t.runtime.signInToOrganisation({ relayUrl: t.relayAddress, relayTenant: '-x' }),
    ).toMatchObject({ ok: false, field: 'relayTenant' });
    expect(
      await t.runtime.signInToOrganisation({ relayUrl: t.relayAddress, relayTenant: 'globex' }),
    ).toEqual({
      ok: false,
      message: 'The relay offers no organisation sign-in for the tenant “globex”.',
      remedy: 'Check the relay address and tenant name with your administrator.',
    });
    expect(
      await t.runtime.signInToOrganisation({ relayUrl: 'ws://127.0.0.1:9', relayTenant: 'acme' }),
    ).toEqual({
      ok: false,
      // The host, the port and what happened (before: "The relay 127.0.0.1:9 could not be reached.").
      message:
        '127.0.0.1:9 cannot be reached: the connection was refused (nothing listens on that port, or a firewall refuses it).',
      remedy: 'Check the relay address in Settings and your network connection, then try again.',
    });

    const pending = t.runtime.signInToOrganisation({
      relayUrl: t.relayAddress,
      relayTenant: 'acme',
    });
    await waitFor(() => opened !== '', 'the browser opened');
    expect(new URL(opened).searchParams.get('code_challenge_method')).toBe('S256');
    t.runtime.cancelOrganisationSignIn();
    expect(await pending).toEqual({ ok: false, message: 'Sign-in cancelled.', cancelled: true });
    // Still the API key's computer: nothing was changed by the attempts.
    expect(t.runtime.settings()).toMatchObject({
      connectionMode: 'api-key',
      apiKey: 'ak_live_acme',
    });
  }, 60_000);
});
