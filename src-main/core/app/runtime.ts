/**
 * The app's behaviour behind the tray and the IPC channels, free of Electron: settings (with the
 * secret in the keychain), the connection to the service (rebuilt when its settings change), the
 * demo, pause and Do Not Disturb, the combined status, the directory, the history and the call
 * presenter. src-main/electron/main.ts wires it to real windows; tests wire it to fakes.
 */
import type {
  ContactsFilePick,
  HistoryItem,
  SaveResult,
  SettingsPatch,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from './views.ts';
import { writeFileAtomic } from '../../../src-shared/atomic-file.ts';
import type { Clock } from '../../../src-shared/clock.ts';
import { Emitter } from '../../../src-shared/emitter.ts';
import {
  keychainAccount,
  keychainAccountOrNull as accountFor,
  MemoryCredentialStore,
  type CredentialStore,
} from '../credentials/credential-store.ts';
import { credentialsSource } from '../credentials/credentials-source.ts';
import type { ConnectionStatus, WakeReason } from '../events/contracts.ts';
import { UserNumberMatcher } from '../events/numbers.ts';
import { recoveryPacer, type Fault } from '../../../src-shared/last-resort.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/log.ts';
import { DEFAULT_SETTINGS, type Settings } from '../settings/types.ts';
import { CallPresenter, crmValuesOf } from './call-presenter.ts';
import type { Connection, ConnectionFactory } from './connection.ts';
import { previewCrmUrl } from './crm-url.ts';
import { Directory } from './directory.ts';
import { historyToCsv } from './history-csv.ts';
import type { HistoryStore } from './history-store.ts';
import type {
  ClipboardPort,
  DemoService,
  Notifier,
  PopupView,
  TrayView,
  UrlOpener,
} from './ports.ts';
import {
  testConnection,
  type ConnectionProbe,
  type TestConnectionInput,
} from './test-connection.ts';

export type SettingsUpdate =
  { ok: true; settings: Settings } | { ok: false; field: string; message: string };

/** The settings file, as the runtime needs it (SettingsStore adapts to this). */
export interface SettingsPort {
  load(): Promise<Settings>;
  /** Checks a patch against the current settings without saving. */
  check(patch: Partial<Settings>): SettingsUpdate;
  /** Validates, merges and saves atomically. */
  update(patch: Partial<Settings>): Promise<SettingsUpdate>;
}

export interface RuntimeViews {
  notifier: Notifier;
  popup: PopupView;
  urlOpener: UrlOpener;
  clipboard: ClipboardPort;
  tray: TrayView;
}

export interface AppRuntimeDeps {
  clock: Clock;
  logger: Logger;
  secrets: SecretRegistry;
  settings: SettingsPort;
  credentials: CredentialStore;
  history: HistoryStore;
  views: RuntimeViews;
  connect: ConnectionFactory;
  startDemo: () => Promise<DemoService>;
  createProbe: (input: TestConnectionInput & { secret: string }) => ConnectionProbe;
  localAddress?: (host: string) => Promise<string | null>;
  /** Called after settings are loaded or saved (start at login, etc.). */
  onSettingsApplied?: (settings: Settings) => void;
  /** Writes an exported file (History > Export CSV…); atomic by default. */
  writeExport?: (path: string, data: string) => Promise<void>;
  directoryRefreshMs?: number;
}

/** Fields whose change needs a new connection. */
const CONNECTION_FIELDS: ReadonlyArray<keyof Settings> = [
  'baseUrl',
  'apiKey',
  'extensions',
  'dids',
  'defaultRegion',
  'eventSource',
  'relayUrl',
  'relayTenant',
  'staleRingSec',
  'demoMode',
];

const NOT_SET_UP: ConnectionStatus = {
  state: 'needs-attention',
  reason: 'Screenpop is not set up yet.',
  remedy: 'Open Settings to connect to your phone system, or try the demo.',
};

type Listener<T> = (value: T) => void;

export class AppRuntime {
  readonly presenter: CallPresenter;
  readonly directory: Directory;
  private readonly d: AppRuntimeDeps;
  private readonly logger: Logger;
  private readonly demoSecrets = new MemoryCredentialStore();
  private current!: Settings;
  private hasSecret = false;
  private demo: DemoService | null = null;
  private connection: Connection | null = null;
  private detach: Array<() => void> = [];
  private connectionStatus: ConnectionStatus = NOT_SET_UP;
  private paused = false;
  private readonly statusListeners: Emitter<[StatusView]>;
  private readonly settingsListeners: Emitter<[SettingsView]>;
  private lastStatusJson = '';
  /** The service (address and key) the directory's extension list came from. */
  private directoryService = '';
  /** Serializes connection rebuilds (a save during a rebuild waits its turn). */
  private chain: Promise<void> = Promise.resolve();
  private lastFault: Fault | null = null;
  /** Rebuilds after unexpected errors, at most once per 30 s (a fault that repeats is no loop). */
  private readonly recovery: { trigger(): void; cancel(): void };
  /** The numbers that reach the user on the connection in force (demo: the demo's extension). */
  private userNumbers: UserNumberMatcher | null = null;
  /** Contacts files the user picked in the native dialog; the only new paths a save accepts. */
  private readonly pickedContactsFiles = new Set<string>();

  constructor(deps: AppRuntimeDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'app' });
    this.statusListeners = new Emitter(this.logger, 'status');
    this.settingsListeners = new Emitter(this.logger, 'settings');
    this.directory = new Directory({
      clock: deps.clock,
      logger: deps.logger,
      fetchExtensions: () =>
        this.connection
          ? this.connection.fetchExtensions()
          : Promise.reject(new Error('not connected')),
      ...(deps.directoryRefreshMs !== undefined ? { refreshMs: deps.directoryRefreshMs } : {}),
    });
    this.presenter = new CallPresenter({
      clock: deps.clock,
      logger: deps.logger,
      directory: this.directory,
      history: deps.history,
      notifier: deps.views.notifier,
      popup: deps.views.popup,
      urlOpener: deps.views.urlOpener,
      clipboard: deps.views.clipboard,
      settings: () => this.current,
      isUserNumber: (to) => this.userNumbers?.matches(to) ?? false,
    });
    deps.history.onChange(() => this.publishStatus());
    this.directory.onChange(() => this.presenter.refreshNames());
    this.recovery = recoveryPacer(deps.clock, 30_000, () => {
      if (this.connection) void this.enqueue(() => this.reconnect({ keepCards: true }));
    });
  }

  /** Loads settings and history and connects if set up. Returns whether onboarding is needed. */
  async start(): Promise<{ needsOnboarding: boolean }> {
    this.current = await this.d.settings.load();
    this.d.history.setLimit(this.current.historyLimit);
    await this.d.history.load();
    this.directory.setDefaultRegion(this.current.defaultRegion);
    if (this.current.contactsFile) await this.directory.loadContactsFile(this.current.contactsFile);
    this.safely(() => this.d.onSettingsApplied?.(this.current));
    if (this.current.demoMode)
      await this.ensureDemo().catch((err: unknown) =>
        this.logger.error('demo could not start', { error: err }),
      );
    await this.refreshHasSecret();
    await this.enqueue(() => this.reconnect());
    return { needsOnboarding: this.needsOnboarding() };
  }

  async shutdown(): Promise<void> {
    this.recovery.cancel();
    await this.enqueue(() => this.disconnect());
    this.directory.stop();
    await this.d.history.flush();
    await this.demo?.close().catch(() => {});
    this.demo = null;
  }

  /** The settings in force (defaults until start() has loaded them). */
  settings(): Settings {
    return this.current ?? DEFAULT_SETTINGS;
  }

  settingsView(): SettingsView {
    const current = this.settings();
    return {
      settings: { ...current },
      hasSecret: this.hasSecret || current.demoMode,
      needsOnboarding: this.needsOnboarding(),
    };
  }

  status(): StatusView {
    const s = this.paused
      ? { state: 'offline' as const, reason: 'Paused.' }
      : this.connectionStatus;
    return {
      state: s.state,
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.remedy ? { remedy: s.remedy } : {}),
      paused: this.paused,
      doNotDisturb: this.current?.doNotDisturb ?? false,
      missedCount: this.d.history.missedCount(),
      demo: this.current?.demoMode ?? false,
      ...(this.lastFault ? { fault: { count: this.lastFault.count, at: this.lastFault.at } } : {}),
    };
  }

  /**
   * The process's last resort caught an unexpected error (src-main/electron/main.ts wires it): the
   * status says so, and the connection is rebuilt from scratch, whatever state the error left it
   * in; the calls on screen stay.
   */
  recoverFromFault(fault: Fault): void {
    this.lastFault = fault;
    this.logger.warn('rebuilding the connection after an unexpected error', {
      faults: fault.count,
    });
    this.publishStatus();
    this.recovery.trigger();
  }

  onStatus(listener: Listener<StatusView>): () => void {
    return this.statusListeners.on(listener);
  }

  onSettings(listener: Listener<SettingsView>): () => void {
    return this.settingsListeners.on(listener);
  }

  history(): HistoryItem[] {
    return this.d.history.list();
  }

  markHistorySeen(): void {
    this.d.history.markAllSeen();
  }

  /** Copies a history entry's caller number; false when the entry is gone. */
  copyHistoryNumber(callId: string): boolean {
    const entry = this.d.history.get(callId);
    if (!entry) return false;
    this.d.views.clipboard.writeText(entry.from);
    return true;
  }

  /** Opens the CRM link for a history entry with the same builder and gate as the popup's. */
  openHistoryCrm(callId: string): Promise<{ ok: boolean; message?: string }> {
    const entry = this.d.history.get(callId);
    if (!entry)
      return Promise.resolve({ ok: false, message: 'That call is no longer in the history.' });
    return this.presenter.openCrmWith(crmValuesOf(entry));
  }

  /**
   * Writes the history entries with these ids (each once, in the order given; unknown ids are
   * skipped) as CSV to `path`, which the user chose in the save dialog. Returns how many.
   */
  async exportHistoryCsv(path: string, callIds: readonly string[]): Promise<number> {
    const byId = new Map(this.d.history.list().map((e) => [e.callId, e]));
    const entries = [...new Set(callIds)].flatMap((id) => byId.get(id) ?? []);
    const write = this.d.writeExport ?? ((p, data) => writeFileAtomic(p, data, 0o644));
    await write(path, historyToCsv(entries));
    this.logger.info('history exported', { entries: entries.length });
    return entries.length;
  }

  /**
   * The user picked a contacts file in the native dialog: says what is in it, and lets a later
   * save use that path (a path typed or sent by the page itself is refused).
   */
  async pickContactsFile(path: string): Promise<ContactsFilePick> {
    this.pickedContactsFiles.add(path);
    const inspected = await this.directory.inspectContactsFile(path);
    return inspected.ok
      ? { status: 'picked', path, contacts: inspected.count }
      : {
          status: 'failed',
          path,
          message: inspected.message ?? 'The contacts file could not be read.',
        };
  }

  previewCrm(template: string) {
    return previewCrmUrl(template, this.current.crmAllowedSchemes);
  }

  async saveSettings(raw: SettingsPatch): Promise<SaveResult> {
    const before = this.current;
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
      return {
        ok: false,
        field: 'contactsFile',
        message: 'Choose the contacts file with "Choose file…".',
      };
    }
    const checked = this.d.settings.check(patch.settings);
    if (!checked.ok) return checked;
    const secret = patch.secret?.trim();
    if (secret) {
      this.d.secrets.add(secret);
      const account = accountFor(checked.settings.apiKey, checked.settings.baseUrl);
      if (!account) {
        return {
          ok: false,
          field: checked.settings.apiKey.trim() ? 'baseUrl' : 'apiKey',
          message: 'Enter the service address and the API key that go with this secret.',
        };
      }
      try {
        await this.d.credentials.setSecret(account, secret);
      } catch (err) {
        this.logger.error('the secret could not be stored in the keychain', { error: err });
        return {
          ok: false,
          field: 'secret',
          message:
            'The secret could not be stored in the system keychain. Is the keychain unlocked?',
        };
      }
    }
    const saved = await this.d.settings.update(patch.settings);
    if (!saved.ok) return saved;
    await this.applySettings(before, saved.settings, Boolean(secret));
    return { ok: true, view: this.settingsView() };
  }

  async testConnection(patch: SettingsPatch): Promise<TestConnectionResult> {
    const checked = this.d.settings.check(patch.settings);
    if (!checked.ok)
      return { ok: false, message: checked.message, remedy: `Check the field "${checked.field}".` };
    const s = checked.settings;
    const demo = s.demoMode && !this.leavesDemo(patch) ? this.demo : null;
    const baseUrl = demo ? demo.baseUrl : s.baseUrl;
    const apiKey = demo ? demo.apiKey : s.apiKey;
    let secret = patch.secret?.trim() || null;
    if (secret) this.d.secrets.add(secret);
    if (!secret && demo) secret = demo.secret;
    const account = accountFor(apiKey, baseUrl);
    if (!secret && account) secret = await this.d.credentials.getSecret(account).catch(() => null);
    return testConnection(
      {
        baseUrl,
        apiKey,
        secret,
        extensions: demo ? [demo.extension] : s.extensions,
        defaultRegion: s.defaultRegion,
      },
      {
        createProbe: this.d.createProbe,
        logger: this.logger,
        ...(this.d.localAddress ? { localAddress: this.d.localAddress } : {}),
      },
    );
  }

  async startDemo(): Promise<SettingsView> {
    await this.ensureDemo();
    const before = this.current;
    const saved = await this.d.settings.update({ demoMode: true });
    if (saved.ok) await this.applySettings(before, saved.settings, false);
    return this.settingsView();
  }

  async setDoNotDisturb(on: boolean): Promise<void> {
    const before = this.current;
    const saved = await this.d.settings.update({ doNotDisturb: on });
    if (saved.ok) await this.applySettings(before, saved.settings, false);
  }

  async setPaused(paused: boolean): Promise<void> {
    if (paused === this.paused) return;
    this.paused = paused;
    this.logger.info(paused ? 'paused' : 'resumed');
    await this.enqueue(() => (paused ? this.disconnect() : this.reconnect()));
    this.publishStatus();
  }

  isPaused(): boolean {
    return this.paused;
  }

  wake(reason: WakeReason): void {
    if (!this.paused) this.connection?.wake(reason);
  }

  /** "Try again now" from the tray: resume if paused, else retry the connection at once. */
  async retryNow(): Promise<void> {
    if (this.paused) return this.setPaused(false);
    this.logger.info('retry requested by the user');
    this.connection?.retry();
    if (this.connection) void this.directory.refreshNow();
  }

  /** Waits until queued connection changes are done (tests). */
  idle(): Promise<void> {
    return this.chain;
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

  private needsOnboarding(): boolean {
    if (!this.current) return true;
    if (this.current.demoMode) return false;
    return (
      !this.current.baseUrl ||
      !this.current.apiKey ||
      this.current.extensions.length === 0 ||
      !this.hasSecret
    );
  }

  private async refreshHasSecret(): Promise<void> {
    const { apiKey, baseUrl } = this.current;
    this.hasSecret = false;
    if (!apiKey || !baseUrl) return;
    try {
      this.hasSecret =
        (await this.d.credentials.getSecret(keychainAccount(apiKey, baseUrl))) !== null;
    } catch (err) {
      this.logger.warn('keychain could not be read', { error: err });
    }
  }

  private async ensureDemo(): Promise<DemoService> {
    if (this.demo) return this.demo;
    const demo = await this.d.startDemo();
    this.d.secrets.add(demo.secret);
    await this.demoSecrets.setSecret(keychainAccount(demo.apiKey, demo.baseUrl), demo.secret);
    this.demo = demo;
    return demo;
  }

  private async applySettings(
    before: Settings,
    after: Settings,
    secretChanged: boolean,
  ): Promise<void> {
    this.current = after;
    this.d.history.setLimit(after.historyLimit);
    this.directory.setDefaultRegion(after.defaultRegion);
    if (after.contactsFile !== before.contactsFile)
      await this.directory.loadContactsFile(after.contactsFile);
    this.presenter.refreshSettings();
    if (after.demoMode && !this.demo)
      await this.ensureDemo().catch((err: unknown) =>
        this.logger.error('demo could not start', { error: err }),
      );
    await this.refreshHasSecret();
    this.safely(() => this.d.onSettingsApplied?.(after));
    const reconnect =
      secretChanged ||
      CONNECTION_FIELDS.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
    if (reconnect) {
      await this.enqueue(async () => {
        await this.reconnect();
        if (!after.demoMode && this.demo) {
          await this.demo.close().catch(() => {});
          this.demo = null;
        }
      });
    }
    const view = this.settingsView();
    this.settingsListeners.emit(view);
    this.publishStatus();
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.chain.then(task, task);
    this.chain = next.catch((err: unknown) =>
      this.logger.error('connection change failed', { error: err }),
    );
    return this.chain;
  }

  private async disconnect(options: { keepCards?: boolean } = {}): Promise<void> {
    const old = this.connection;
    this.connection = null;
    for (const off of this.detach.splice(0)) off();
    if (!options.keepCards) this.presenter.clear();
    if (old) await old.stop();
    this.directory.stop();
  }

  /** Stops the old connection and, when set up and not paused, starts a new one. */
  private async reconnect(options: { keepCards?: boolean } = {}): Promise<void> {
    await this.disconnect(options);
    const s = this.current;
    const demo = s.demoMode ? this.demo : null;
    if (s.demoMode && !demo) {
      this.setConnectionStatus({
        state: 'needs-attention',
        reason: 'The demo could not start.',
        remedy: 'Restart Screenpop, or set up a real connection in Settings.',
      });
      return;
    }
    if (!demo && this.needsOnboarding()) {
      this.setConnectionStatus(NOT_SET_UP);
      return;
    }
    if (this.paused) return;
    const baseUrl = demo ? demo.baseUrl : s.baseUrl;
    const effective: Settings = demo
      ? {
          ...s,
          baseUrl,
          apiKey: demo.apiKey,
          extensions: [demo.extension],
          dids: [],
          relayUrl: '',
          relayTenant: demo.tenant,
          eventSource: 'direct',
        }
      : s;
    this.userNumbers = new UserNumberMatcher({
      extensions: effective.extensions,
      dids: effective.dids,
      defaultRegion: effective.defaultRegion,
    });
    const credentials = credentialsSource(demo ? this.demoSecrets : this.d.credentials, () => ({
      apiKey: effective.apiKey,
      baseUrl,
    }));
    let connection: Connection;
    try {
      connection = this.d.connect({ baseUrl, settings: effective, credentials });
    } catch (err) {
      this.logger.error('connection could not be set up', { error: err });
      this.setConnectionStatus({
        state: 'needs-attention',
        reason: err instanceof Error ? err.message : 'The connection settings are not usable.',
        remedy: 'Check the connection settings.',
      });
      return;
    }
    this.connection = connection;
    const service = JSON.stringify([baseUrl, effective.apiKey]);
    if (service !== this.directoryService) {
      // Another tenant's names must not be shown for this one's numbers while its list loads.
      this.directory.forgetExtensions();
      this.directoryService = service;
    }
    const { engine } = connection;
    this.detach.push(
      engine.onPop((pop) => this.presenter.handlePop(pop)),
      engine.onDismiss((dismiss) => this.presenter.handleDismiss(dismiss)),
      engine.onStatus((status) => this.setConnectionStatus(status)),
    );
    this.setConnectionStatus({ state: 'connecting', reason: 'Connecting…' });
    engine.start();
    this.directory.start();
    this.logger.info('connected to the service', {
      demo: Boolean(demo),
      mode: effective.eventSource,
    });
  }

  private setConnectionStatus(status: ConnectionStatus): void {
    this.connectionStatus = status;
    this.publishStatus();
  }

  private publishStatus(): void {
    if (!this.current) return;
    const status = this.status();
    this.d.views.tray.setState(status, status.missedCount, this.d.history.recent(10));
    const json = JSON.stringify(status);
    if (json === this.lastStatusJson) return;
    this.lastStatusJson = json;
    this.statusListeners.emit(status);
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error('listener failed', { error: err });
    }
  }
}
