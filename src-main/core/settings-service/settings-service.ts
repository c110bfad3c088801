/**
 * The settings service: the settings in force and the secret in the keychain, what Settings shows
 * (the view, whether onboarding is needed), saving a patch (the secret first, then the file),
 * Test connection, the CRM preview, the contacts files the user picked, and the demo's simulator,
 * which stands in for the service while demo mode is on. From all that it says what a connection
 * should be built for (`plan()`); building it is the connection supervisor's job. How secrets are
 * kept is settings-keychain.ts; how a test runs, settings-connection-test.ts.
 */
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import type { CredentialStore } from '../credentials/credential-store.ts';
import { DEFAULT_SETTINGS, type PhoneSystem, type Settings } from '../settings/types.ts';
import { changedAmong, CONNECTION_FIELDS } from '../settings/changes.ts';
import { featuresNotOffered } from '../../../src-shared/wire/index.ts';
import { NOT_SET_UP, type ConnectionPlan } from '../connection/connection-supervisor.ts';
import type { ProbeTarget } from '../connection/connection.ts';
import { previewCrmUrl } from '../links/crm-url.ts';
import { crmSettingsProblem } from '../crm/settings-problem.ts';
import type { ContactsFileResult } from '../contacts/directory.ts';
import { contactsProblemWords } from '../contacts/problem-words.ts';
import { DemoLifecycle } from './demo-lifecycle.ts';
import type { DemoService } from '../ports/ports.ts';
import { refusal, type SettingsPort, type SettingsRefusal } from './settings-port.ts';
import type { ConnectionProbe, TestConnectionInput } from '../connection/test-connection.ts';
import {
  deleteApiSecret,
  readKeychain,
  storeApiSecret,
  storeCrmSecret,
  storeCrmLogSecret,
  type SettingsKeychainDeps,
} from './settings-keychain.ts';
import {
  NOT_SIGNED_IN,
  refusedTest,
  testApiKey,
  testOrganisation,
  type SettingsTestDeps,
} from './settings-connection-test.ts';
import type {
  ContactsFilePick,
  CrmPreview,
  SettingsPatch,
  SettingsView,
  TestConnectionResult,
} from '../ports/views.ts';
import { english, phrase, render } from '../../../src-shared/i18n/phrase.ts';
import { saidStatus } from '../events/status.ts';
import type { OrganisationAccount, OrgSignInState } from '../org/org-account.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../../src-shared/i18n/locale-state.ts';
import type { Translator } from '../../../src-shared/i18n/translator.ts';

export interface SettingsServiceDeps {
  logger: Logger;
  secrets: SecretRegistry;
  settings: SettingsPort;
  credentials: CredentialStore;
  /** Starts the demo's simulator playing `phoneSystem` (the one in the settings). */
  startDemo: (phoneSystem: PhoneSystem) => Promise<DemoService>;
  createProbe: (input: TestConnectionInput & { secret: string }) => ConnectionProbe;
  /**
   * The running connection's probe when a test is about the application it signs in with (the
   * stored secret): Test connection then takes no new token (connection.ts runningProbe).
   */
  runningProbe?: (target: ProbeTarget) => ConnectionProbe | null;
  localAddress?: (host: string) => Promise<string | null>;
  /** What a contacts file holds (the directory reads it). */
  inspectContactsFile: (path: string) => Promise<ContactsFileResult>;
  /** The language the user reads (the app's LocaleState); English, plain, when not given. */
  words?: TranslatorSource;
  /** Organisation mode's sign-in (core/org/org-account.ts); without it the mode cannot connect. */
  organisation?: Pick<OrganisationAccount, 'stored' | 'test'>;
}

/** A saved change: the settings before and after, and whether a new secret was stored. */
export interface SettingsChange {
  before: Settings;
  after: Settings;
  secretChanged: boolean;
  /** A new CRM token or password was stored. */
  crmSecretChanged?: boolean;
  /** A new call-log signing secret was stored. */
  crmLogSecretChanged?: boolean;
}

export type SaveOutcome = { ok: true; change: SettingsChange } | SettingsRefusal;

/** Whether a saved change needs a new connection (DND, linger, CRM, history limit do not). */
export function needsReconnect(change: SettingsChange): boolean {
  return change.secretChanged || changedAmong(change.before, change.after, CONNECTION_FIELDS);
}

/** Whether these settings are organisation mode (the demo is always the API-key kind). */
export function isOrganisationMode(settings: Settings): boolean {
  return settings.connectionMode === 'organisation' && !settings.demoMode;
}

const DEMO_FAILED = saidStatus(
  'needs-attention',
  [phrase('status.demo-failed')],
  [phrase('status.demo-failed-remedy')],
);

export class SettingsService {
  private readonly d: SettingsServiceDeps;
  private readonly logger: Logger;
  private current: Settings | null = null;
  private hasSecret = false;
  private hasCrmSecret = false;
  private hasCrmLogSecret = false;
  /** Organisation mode: the sign-in the keychain holds for the settings' relay and tenant. */
  private orgSignIn: OrgSignInState | null = null;
  /** The demo's simulator and its in-memory secret (demo-lifecycle.ts). */
  private readonly demo: DemoLifecycle;
  /** Contacts files the user picked in the native dialog; the only new paths a save accepts. */
  private readonly pickedContactsFiles = new Set<string>();

  /** What the keychain helpers and the connection tests need of the deps. */
  private readonly keychain: SettingsKeychainDeps;
  private readonly tests: SettingsTestDeps;

  constructor(deps: SettingsServiceDeps) {
    this.d = deps;
    this.keychain = deps;
    this.tests = deps;
    this.logger = deps.logger;
    this.demo = new DemoLifecycle({
      start: deps.startDemo,
      secrets: deps.secrets,
      logger: deps.logger,
    });
  }

  /** The translator of the language in force now. */
  private words(): Translator {
    return (this.d.words ?? PLAIN_ENGLISH).current();
  }

  /** Reads the settings file; they are in force from now on. */
  async load(): Promise<Settings> {
    this.current = await this.d.settings.load();
    return this.current;
  }

  /** Whether load() has run. */
  loaded(): boolean {
    return this.current !== null;
  }

  /** The settings in force (defaults until load()). */
  settings(): Settings {
    return this.current ?? DEFAULT_SETTINGS;
  }

  view(): SettingsView {
    const current = this.settings();
    return {
      settings: { ...current },
      hasSecret: this.hasSecret || current.demoMode,
      hasCrmSecret: this.hasCrmSecret,
      hasCrmLogSecret: this.hasCrmLogSecret,
      needsOnboarding: this.needsOnboarding(),
      notOffered: featuresNotOffered(),
      ...(isOrganisationMode(current)
        ? { organisation: { signedIn: this.orgSignIn ? { ...this.orgSignIn } : null } }
        : {}),
    };
  }

  needsOnboarding(): boolean {
    if (!this.current) return true;
    if (this.current.demoMode) return false;
    if (isOrganisationMode(this.current))
      return !this.current.relayUrl || !this.current.relayTenant || !this.orgSignIn;
    return (
      !this.current.baseUrl ||
      !this.current.apiKey ||
      this.current.extensions.length === 0 ||
      !this.hasSecret
    );
  }

  /**
   * Brings what depends on the settings in force up to date: the demo runs while demo mode is on
   * (a failure is logged; the plan then says so), and whether the keychain holds the secret.
   */
  async prepare(): Promise<void> {
    await this.demo.follow(this.settings().demoMode, this.settings().phoneSystem);
    await this.refreshHasSecret();
    // Once this computer holds a sign-in, or when the policy locks the mode (the key can never be
    // used again): a Save that switches the mode before anyone signed in must not cost the user
    // the key and secret they may still go back to.
    const forGood = this.orgSignIn !== null || this.d.settings.locked?.('connectionMode') === true;
    if (isOrganisationMode(this.settings()) && forGood) {
      await this.dropApiKey();
      await this.refreshHasSecret();
    }
  }

  /**
   * Organisation mode keeps no API key or secret on this computer: the secret of the key the
   * settings held is deleted from the keychain and the key from the settings file. Runs on every
   * prepare in this mode once signed in (or locked to it), so a machine switched by its policy is
   * cleaned up at start too.
   */
  private async dropApiKey(): Promise<void> {
    const { apiKey, baseUrl } = this.settings();
    await deleteApiSecret(this.keychain, apiKey, baseUrl);
    if (!apiKey) return;
    const saved = await this.d.settings.update({ apiKey: '' });
    if (saved.ok) this.current = saved.settings;
  }

  /**
   * Saves a patch from Settings: a new contacts file only when the user picked it, the secret in
   * the keychain (only when the rest is valid), then the file. On success the new settings are in
   * force and prepared.
   */
  async save(raw: SettingsPatch): Promise<SaveOutcome> {
    const before = this.settings();
    const patch = this.leavesDemo(raw)
      ? { ...raw, settings: { ...raw.settings, demoMode: false } }
      : raw;
    const contacts = patch.settings.contactsFile;
    if (
      contacts !== undefined &&
      contacts !== '' &&
      contacts !== before.contactsFile &&
      !this.pickedContactsFiles.has(contacts)
    ) {
      return refusal('contactsFile', phrase('status.settings.contacts-pick'));
    }
    const checked = this.check(patch.settings);
    if (!checked.ok) return checked;
    // "This proxy" with no address fails closed (net/network.ts): say so at the field, not later
    // as a connection that never starts.
    if (checked.settings.proxyMode === 'manual' && !checked.settings.proxyUrl)
      return refusal('proxyUrl', phrase('settings.field.proxyUrl.needed'));
    const secret = patch.secret?.trim();
    if (isOrganisationMode(checked.settings)) {
      const refused = this.organisationProblem(checked.settings, Boolean(secret));
      if (refused) return refused;
    }
    if (secret) {
      const stored = await storeApiSecret(this.keychain, checked.settings, secret);
      if (!stored.ok) return stored;
    }
    const crmSecret = patch.crmSecret?.trim();
    if (crmSecret) {
      const stored = await storeCrmSecret(this.keychain, checked.settings, crmSecret);
      if (!stored.ok) return stored;
      this.hasCrmSecret = true;
    }
    const logSecret = patch.crmLogSecret?.trim();
    if (logSecret) {
      const stored = await storeCrmLogSecret(this.keychain, checked.settings, logSecret);
      if (!stored.ok) return stored;
      this.hasCrmLogSecret = true;
    }
    const saved = await this.update(patch.settings, Boolean(secret));
    if (saved.ok && crmSecret) saved.change.crmSecretChanged = true;
    if (saved.ok && logSecret) saved.change.crmLogSecretChanged = true;
    return saved;
  }

  /**
   * What organisation mode needs before it is saved: the relay's address and tenant, and no API
   * secret to store (only a page that is not ours would send one: the form has no such field).
   */
  organisationProblem(settings: Settings, typedSecret = false): SettingsRefusal | null {
    if (typedSecret) return refusal('secret', phrase('status.org.no-api-secret'));
    if (!settings.relayUrl) return refusal('relayUrl', phrase('status.org.relay-url-needed'));
    if (!settings.relayTenant)
      return refusal('relayTenant', phrase('status.org.relay-tenant-needed'));
    return null;
  }

  /**
   * A patch checked against the settings in force (and the policy), without saving it. A problem
   * in the CRM lookup is said in the user's language and names its part (`crmLookup.urlTemplate`),
   * so Settings shows it next to that field.
   */
  check(patch: Partial<Settings>): ReturnType<SettingsPort['check']> {
    const checked = this.d.settings.check(patch);
    if (checked.ok || checked.field !== 'crmLookup') return checked;
    const problem = crmSettingsProblem(checked.words);
    return problem
      ? {
          ok: false,
          field: `crmLookup.${problem.part}`,
          words: problem.words,
          message: english(problem.words),
        }
      : checked;
  }

  /** Saves a change that needs no form (demo mode, Do Not Disturb from the tray). */
  async update(patch: Partial<Settings>, secretChanged = false): Promise<SaveOutcome> {
    const before = this.settings();
    const saved = await this.d.settings.update(patch);
    if (!saved.ok) return saved;
    this.current = saved.settings;
    await this.prepare();
    // prepare() may have changed them again (organisation mode drops the API key).
    return { ok: true, change: { before, after: this.settings(), secretChanged } };
  }

  async testConnection(patch: SettingsPatch): Promise<TestConnectionResult> {
    const checked = this.check(patch.settings);
    if (!checked.ok) return refusedTest(this.tests, checked);
    const s = checked.settings;
    if (isOrganisationMode(s)) return testOrganisation(this.tests, s, this.organisationProblem(s));
    const demo = s.demoMode && !this.leavesDemo(patch) ? this.demo.running : null;
    return testApiKey(this.tests, s, patch, demo);
  }

  previewCrm(template: string): CrmPreview {
    return previewCrmUrl(template, this.settings().crmAllowedSchemes);
  }

  /**
   * The user picked a contacts file in the native dialog: says what is in it, and lets a later
   * save use that path (a path typed or sent by the page itself is refused).
   */
  async pickContactsFile(path: string): Promise<ContactsFilePick> {
    this.pickedContactsFiles.add(path);
    const inspected = await this.d.inspectContactsFile(path);
    return inspected.ok
      ? { status: 'picked', path, contacts: inspected.count }
      : {
          status: 'failed',
          path,
          message: render(contactsProblemWords(inspected.problem), this.words()),
        };
  }

  /** Starts the demo's simulator for the settings' phone system (once; demo-lifecycle.ts). */
  startDemo(): Promise<DemoService> {
    return this.demo.start(this.settings().phoneSystem);
  }

  /** Closes the demo's simulator, if it runs (demo mode left, or shutdown). */
  closeDemo(): Promise<void> {
    return this.demo.close();
  }

  /** What a connection built now should connect to, or why none should be. */
  plan(): ConnectionPlan {
    const s = this.settings();
    if (isOrganisationMode(s))
      return s.relayUrl && s.relayTenant && this.orgSignIn
        ? { connect: true, settings: s, credentials: this.d.credentials, demo: false }
        : { connect: false, status: NOT_SIGNED_IN };
    const demo = s.demoMode ? this.demo.running : null;
    if (s.demoMode && !demo) return { connect: false, status: DEMO_FAILED };
    if (!demo && this.needsOnboarding()) return { connect: false, status: NOT_SET_UP };
    if (!demo) return { connect: true, settings: s, credentials: this.d.credentials, demo: false };
    return {
      connect: true,
      settings: {
        ...s,
        baseUrl: demo.baseUrl,
        apiKey: demo.apiKey,
        extensions: [demo.extension],
        dids: [],
        relayUrl: '',
        relayTenant: demo.tenant,
        eventSource: 'direct',
        phoneSystem: demo.phoneSystem ?? 'standard',
        // The demo is its own simulated phone system, reached with its key: never the relay of
        // an organisation-mode computer (the connection factory decides by this field).
        connectionMode: 'api-key',
      },
      credentials: this.demo.credentials,
      demo: true,
    };
  }

  /**
   * In demo mode, a patch that enters a service address and key (without saying anything about
   * demoMode) means "connect to my real phone system now": the demo ends when it is saved.
   */
  private leavesDemo(patch: SettingsPatch): boolean {
    const p = patch.settings;
    if (!this.settings().demoMode || p.demoMode !== undefined) return false;
    if (!('baseUrl' in p) && !('apiKey' in p)) return false;
    const merged = { ...this.settings(), ...p };
    return Boolean(merged.baseUrl && merged.apiKey);
  }

  private async refreshHasSecret(): Promise<void> {
    const settings = this.settings();
    const holds = await readKeychain(this.keychain, settings, isOrganisationMode(settings));
    this.hasSecret = holds.hasSecret;
    this.hasCrmSecret = holds.hasCrmSecret;
    this.hasCrmLogSecret = holds.hasCrmLogSecret;
    this.orgSignIn = holds.orgSignIn;
  }
}
