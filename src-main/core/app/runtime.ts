/**
 * The app's behaviour behind the tray and the IPC channels, free of Electron: it composes the
 * settings service (settings-service.ts: settings, secret, demo, Test connection), the connection
 * supervisor (connection-supervisor.ts: the connection, its rebuild queue, pause, its status), the
 * directory, the history and the call presenter, applies a saved change to each, and combines
 * their states into the one status the tray and the windows show. src-main/electron/main.ts wires
 * it to real windows; tests wire it to fakes.
 */
import type { CallLogSink } from '../ports/call-log.ts';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import type { Fault } from '../../../src-shared/process/last-resort.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { StatusTimeline } from '../diagnostics/bounded-log.ts';
import type { WakeReason } from '../events/contracts.ts';
import type { Settings } from '../settings/types.ts';
import { changedAmong, CRM_FIELDS } from '../settings/changes.ts';
import { CallPresenter, crmValuesOf } from '../presenters/call-presenter.ts';
import type { DesktopHealth } from './desktop-health.ts';
import type { ConnectionFactory } from '../connection/connection.ts';
import { ConnectionSupervisor } from '../connection/connection-supervisor.ts';
import { NoticePresenter } from '../presenters/notice-presenter.ts';
import { Directory } from '../contacts/directory.ts';
import { historyToCsv } from '../history/history-csv.ts';
import type { HistoryStore } from '../history/history-store.ts';
import type { ClipboardPort, Notifier, PopupView, TrayView, UrlOpener } from '../ports/ports.ts';
import {
  needsReconnect,
  SettingsService,
  type SettingsChange,
  type SettingsServiceDeps,
} from '../settings-service/settings-service.ts';
import type { RingActions } from '../ring-actions/ring-actions.ts';
import type {
  ContactsFilePick,
  CrmPreview,
  CrmTestResult,
  HistoryItem,
  OrgRelayPatch,
  OrgSignInResult,
  SaveResult,
  SettingsPatch,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from '../ports/views.ts';
import { render } from '../../../src-shared/i18n/phrase.ts';
import type { CallLogStatus } from '../call-log/queue.ts';
import { PLAIN_ENGLISH } from '../../../src-shared/i18n/locale-state.ts';
import type { CrmLookup } from '../crm/lookup.ts';
import type { OrganisationAccount } from '../org/org-account.ts';
import { CrmFlow } from './crm-flow.ts';
import { organisationPatch, runOrganisationStep } from './organisation-flow.ts';
import { isOrganisationMode } from '../settings-service/settings-service.ts';
import type { FaultId } from '../../../src-shared/api/service-errors.ts';
import type { CallControl } from '../ports/call-control.ts';
import { DirectCallControl } from '../calls/direct-call-control.ts';
import { callControlByMode, OrgCallControl } from '../org/org-call-control.ts';
import { ClaimedCallLog, relayCallClaimer } from '../org/claimed-call-log.ts';
import { newClaimDevice } from '../org/claim-device.ts';
import { CallActions } from '../calls/call-actions.ts';
import { Consultations } from '../calls/consultations.ts';
import { OneNotificationPerCall } from '../presenters/one-notification-per-call.ts';

export interface RuntimeViews {
  notifier: Notifier;
  popup: PopupView;
  urlOpener: UrlOpener;
  clipboard: ClipboardPort;
  tray: TrayView;
}

/** What the settings service takes (the directory reads contacts files), and the rest. */
export interface AppRuntimeDeps extends Omit<SettingsServiceDeps, 'inspectContactsFile'> {
  clock: Clock;
  history: HistoryStore;
  views: RuntimeViews;
  connect: ConnectionFactory;
  /** The organisation's policy as the Settings window shows it (policy.ts managedView). */
  managed?: { by: string; locked: Array<keyof Settings> } | null;
  /** The administrator's actions on ring (policy.ts onRing), run for each new ringing call. */
  ringActions?: RingActions;
  /** How the connection's proxy accepted us (the transport's proxyAuthInUse), for the status. */
  proxyAuthInUse?: () => { scheme: string; identity?: string } | undefined;
  /** What the desktop side found wrong on this computer; shown in the status (desktop-health.ts). */
  health?: DesktopHealth;
  /** Called after settings are loaded or saved (start at login, etc.). */
  onSettingsApplied?: (settings: Settings) => void;
  /**
   * The way out for the CRM lookup: the transport for these settings (the same proxy and CAs as
   * every other connection). Without it no lookup is made.
   */
  crmNetwork?: (settings: Settings) => { fetch: typeof fetch };
  /** HubSpot's API address (tests and the benchmark point it at the fake). */
  hubspotApi?: string;
  /**
   * Organisation mode's sign-in (core/org/org-account.ts): Settings' Sign in, Enrol and Sign out,
   * and Test connection in that mode. Without it the mode cannot be signed in to.
   */
  organisation?: OrganisationAccount;
  /** Writes an exported file (History > Export CSV…); atomic by default. */
  writeExport?: (path: string, data: string) => Promise<void>;
  directoryRefreshMs?: number;
  /**
   * Where finished calls are logged (issue 39: the durable queue, core/call-log/); without it
   * nothing is logged and no card takes a note.
   */
  callLog?: CallLogSink;
  /**
   * This computer's id in organisation mode's call claims (`device`): the one kept in the app's
   * data folder (core/org/claim-device.ts, loaded by the composition root before the runtime), so
   * calls claimed before a restart are still this computer's after it. Without it, one for this
   * run only.
   */
  claimDevice?: string;
  /**
   * The call-log queue (CallLogQueue): its state for the Settings status, published again each
   * time it changes (a call queued, logged, failing, stopped), not only when Settings asks.
   */
  callLogStatus?: {
    status(): CallLogStatus;
    onChange(listener: () => void): () => void;
  };
  /**
   * Acting on calls (issue 38): a CallControl for the settings in force chosen by the composition
   * root (organisation mode's, through the relay). Without it, the phone system's own call API.
   */
  callControl?: () => CallControl;
  /**
   * Shows the number a tel:/callto:/sip: link will dial with Call and Cancel (the confirmation
   * window); true for Call. Without it a link is never dialled.
   */
  confirmDial?: (shown: string) => Promise<boolean>;
}

/** Organisation mode's faults that end when the user signs in (or enrols) again. */
const SIGN_IN_AGAIN: ReadonlySet<FaultId> = new Set<FaultId>([
  'not-signed-in',
  'sign-in-expired',
  'not-enrolled',
]);

export class AppRuntime {
  readonly presenter: CallPresenter;
  readonly directory: Directory;
  private readonly notices: NoticePresenter;
  readonly settingsService: SettingsService;
  readonly connection: ConnectionSupervisor;
  private readonly d: AppRuntimeDeps;
  private readonly logger: Logger;
  private readonly statusListeners: Emitter<[StatusView]>;
  private readonly settingsListeners: Emitter<[SettingsView]>;
  private lastStatusJson = '';
  private lastTest: { at: number; result: TestConnectionResult } | null = null;
  /** The connection's status changes, for diagnostics. */
  readonly timeline = new StatusTimeline();
  /** The CRM lookup for the settings in force, and Test lookup (crm-flow.ts). */
  private readonly crm: CrmFlow;
  /**
   * The call API over the connection in force: the phone system's own (core/calls/), or in
   * organisation mode the relay's (org/org-call-control.ts).
   */
  private readonly direct: CallControl;
  /** Organisation mode: a call's log claimed at the relay before it is queued (one desktop logs it). */
  private readonly claimedCallLog: ClaimedCallLog | undefined;
  /** Stops following the call-log queue's changes (shutdown). */
  private readonly stopCallLogChanges: (() => void) | undefined;
  /** Call back, the dial box, call links, Transfer, Hang up, Answer, Decline (issue 38). */
  readonly calls: CallActions;
  /** Attended transfers under way, kept here so that a reloaded popup still offers Complete. */
  readonly consultations: Consultations;

  constructor(deps: AppRuntimeDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'app' });
    this.statusListeners = new Emitter(this.logger, 'status');
    this.settingsListeners = new Emitter(this.logger, 'settings');
    this.directory = new Directory({
      clock: deps.clock,
      logger: deps.logger,
      fetchExtensions: () => this.connection.fetchExtensions(),
      // Yeastar P-Series: its queues and ring groups (the card's "Queue: Sales") and its company
      // contacts (caller names after the user's contacts file); nothing on other phone systems.
      fetchGroups: () => this.connection.fetchGroups(),
      fetchPbxContacts: () => this.connection.fetchCompanyContacts(),
      ...(deps.directoryRefreshMs !== undefined ? { refreshMs: deps.directoryRefreshMs } : {}),
    });
    this.settingsService = new SettingsService({
      ...deps,
      logger: this.logger,
      runningProbe: (target) => this.connection.runningProbe(target),
      inspectContactsFile: (path) => this.directory.inspectContactsFile(path),
    });
    this.crm = new CrmFlow({
      ...deps,
      say: this.logger,
      settings: () => this.settingsService.settings(),
    });
    // In organisation mode, the desktops a call rang claim its log at the relay; the holder's logs
    // it (org/claimed-call-log.ts). The other modes hand calls straight to the sink.
    const inForce = () => this.connection.inForce()?.settings ?? this.settingsService.settings();
    const account = deps.organisation;
    const network = deps.crmNetwork;
    // This computer among the user's (the claim is a computer's, not only a user's): per install.
    const device = deps.claimDevice ?? newClaimDevice();
    this.claimedCallLog =
      deps.callLog && account && network
        ? new ClaimedCallLog({
            sink: deps.callLog,
            active: () => isOrganisationMode(inForce()),
            claim: (callId) => {
              const settings = inForce();
              return relayCallClaimer({
                relayUrl: settings.relayUrl,
                tenant: settings.relayTenant,
                tokens: account.tokens(settings),
                fetch: network(settings).fetch,
                device,
              })(callId);
            },
            clock: deps.clock,
            logger: deps.logger,
          })
        : undefined;
    const callLog = this.claimedCallLog ?? deps.callLog;
    // A call that went to voicemail shows the voicemail's notification, not a missed call's too.
    const notifier = new OneNotificationPerCall(deps.views.notifier, deps.clock);
    this.presenter = new CallPresenter({
      clock: deps.clock,
      logger: deps.logger,
      directory: this.directory,
      history: deps.history,
      notifier,
      popup: deps.views.popup,
      urlOpener: deps.views.urlOpener,
      clipboard: deps.views.clipboard,
      settings: () => this.settingsService.settings(),
      isUserNumber: (to) => this.connection.isUserNumber(to),
      crm: () => this.crm.current(),
      // A missed call's notification: Call back where the phone system offers dialling.
      canCallBack: (number) => this.calls.canCallBack(number),
      ...(callLog ? { callLog } : {}),
      ...(deps.ringActions?.count
        ? { onRing: (values, options) => deps.ringActions?.run(values, options) }
        : {}),
    });
    this.consultations = new Consultations({ clock: deps.clock, logger: deps.logger });
    // A call that ended (hung up, gone from the presenter, the connection cleared) consults no one.
    this.presenter.onCardsChange(() =>
      this.consultations.retain((callId) => this.presenter.inCall(callId)),
    );
    this.calls = new CallActions({
      control: () => this.callControl(),
      consultations: this.consultations,
      nameOf: (extension) => this.directory.lookup(extension),
      region: () => this.settingsService.settings().defaultRegion || undefined,
      popupNumber: (callId) => this.presenter.callerNumber(callId),
      historyNumber: (callId) => this.d.history.item(callId)?.from,
      // Settings with the policy's locks: only a locked `false` drops the question (see below).
      confirmDialLinks: () => this.confirmDialLinks(),
      ...(deps.confirmDial ? { confirm: deps.confirmDial } : {}),
      colleagues: (query) =>
        this.directory.colleagues(
          query,
          (this.connection.inForce()?.settings ?? this.settingsService.settings()).extensions,
        ),
      logger: this.logger,
    });
    this.notices = new NoticePresenter({
      clock: deps.clock,
      logger: deps.logger,
      directory: this.directory,
      history: deps.history,
      notifier,
      settings: () => this.settingsService.settings(),
      onStatusChange: () => this.publishStatus(),
      ...(deps.words ? { words: deps.words } : {}),
      canCallBack: (number) => this.calls.canCallBack(number),
    });
    this.connection = new ConnectionSupervisor({
      clock: deps.clock,
      logger: this.logger,
      connect: deps.connect,
      plan: () => this.settingsService.plan(),
      calls: this.presenter,
      notices: this.notices,
      directory: this.directory,
    });
    this.connection.onChange(() => this.publishStatus());
    // The phone system's own call API over the user's sign-in (the direct modes); organisation
    // mode's calls go through the relay (org/org-call-control.ts, issue 38 item 5).
    const callDeps = {
      connection: () => this.connection.inForce()?.connection ?? null,
      settings: () => this.connection.inForce()?.settings ?? this.settingsService.settings(),
      logger: this.logger,
    };
    this.direct = callControlByMode(
      () => callDeps.settings().connectionMode === 'organisation',
      new DirectCallControl(callDeps),
      new OrgCallControl(callDeps),
    );
    deps.history.onChange(() => this.publishStatus());
    this.directory.onChange(() => this.presenter.refreshNames());
    deps.health?.onChange(() => this.publishStatus());
    this.stopCallLogChanges = deps.callLogStatus?.onChange(() => this.publishStatus());
  }

  /** Loads settings and history and connects if set up. Returns whether onboarding is needed. */
  async start(): Promise<{ needsOnboarding: boolean }> {
    const settings = await this.settingsService.load();
    this.d.history.setLimit(settings.historyLimit);
    await this.d.history.load();
    this.directory.setDefaultRegion(settings.defaultRegion);
    if (settings.contactsFile) await this.directory.loadContactsFile(settings.contactsFile);
    this.safely(() => this.d.onSettingsApplied?.(settings));
    this.crm.rebuild(settings);
    await this.settingsService.prepare();
    await this.connection.rebuild();
    return { needsOnboarding: this.settingsService.needsOnboarding() };
  }

  async shutdown(): Promise<void> {
    this.crm.close();
    this.claimedCallLog?.stop();
    this.stopCallLogChanges?.();
    await this.connection.stop();
    await this.d.ringActions?.stop();
    this.directory.stop();
    await this.d.history.flush();
    await this.settingsService.closeDemo();
  }

  /** The settings in force (defaults until start() has loaded them). */
  settings(): Settings {
    return this.settingsService.settings();
  }

  settingsView(): SettingsView {
    const view = this.settingsService.view();
    return this.d.managed ? { ...view, managed: structuredClone(this.d.managed) } : view;
  }

  status(): StatusView {
    const { connection: s, paused, fault, identity } = this.connection.status();
    const settings = this.settingsService.settings();
    // The sources say their status in phrases; said here in the language in force now.
    const t = this.d.words?.current();
    const reason = t && s.words?.reason ? render(s.words.reason, t) : s.reason;
    const remedy = t && s.words?.remedy ? render(s.words.remedy, t) : s.remedy;
    return {
      state: s.state,
      ...(reason ? { reason } : {}),
      ...(remedy ? { remedy } : {}),
      paused,
      doNotDisturb: settings.doNotDisturb,
      missedCount: this.d.history.missedCount(),
      demo: settings.demoMode,
      ...this.notices.statusFields(),
      ...(fault ? { fault: { count: fault.count, at: fault.at } } : {}),
      ...this.desktopProblems(),
      ...this.callLogView(),
      ...this.proxyAuth(s.state),
      ...(isOrganisationMode(settings)
        ? {
            organisation: {
              user: identity?.user ?? null,
              via: identity?.via ?? null,
              extensions: identity ? [...identity.extensions] : [],
              signInNeeded:
                s.state === 'needs-attention' &&
                s.fault !== undefined &&
                SIGN_IN_AGAIN.has(s.fault),
            },
          }
        : {}),
    };
  }

  private proxyAuth(state: StatusView['state']): Pick<StatusView, 'proxyAuth'> {
    const auth = state === 'connected' ? this.d.proxyAuthInUse?.() : undefined;
    if (!auth) return {};
    return {
      proxyAuth: {
        scheme: auth.scheme,
        ...(auth.identity !== undefined && { user: auth.identity }),
      },
    };
  }

  private callLogView(): Pick<StatusView, 'callLog'> {
    const q = this.d.callLogStatus?.status();
    if (!q) return {};
    const t = (this.d.words ?? PLAIN_ENGLISH).current();
    const view: NonNullable<StatusView['callLog']> = {};
    if (q.pending > 0)
      view.waiting = t.t('status.call-log.waiting', {
        count: q.pending,
        age: t.duration(q.oldestPendingMs),
      });
    if (q.stopped) {
      const why =
        q.stopped === 'forbidden' ? 'forbidden' : q.stopped === 'auth' ? 'auth' : 'no-credentials';
      view.problem = {
        reason: t.t(`status.call-log.${why}.reason`),
        remedy: t.t(`status.call-log.${why}.remedy`),
      };
    } else if (q.pausedUntil !== undefined && q.lastFailure?.kind === 'rate-limited') {
      // HubSpot's daily quota (an hour's pause, until it resets) or a short limit (seconds).
      const key = q.lastFailure.daily ? 'status.call-log.paused-daily' : 'status.call-log.paused';
      view.paused = t.t(key, { time: t.time(q.pausedUntil) });
    } else if (q.pausedUntil !== undefined && q.lastFailure?.kind === 'server') {
      // A 5xx: the CRM (or the receiver) answered an error; the queue backs off and tries again.
      view.paused = t.t('status.call-log.retrying', { time: t.time(q.pausedUntil) });
    }
    return Object.keys(view).length > 0 ? { callLog: view } : {};
  }

  private desktopProblems(): Pick<StatusView, 'desktopProblems'> {
    const problems = this.d.health?.list((this.d.words ?? PLAIN_ENGLISH).current()) ?? [];
    return problems.length > 0 ? { desktopProblems: problems } : {};
  }

  /**
   * The process's last resort caught an unexpected error (src-main/electron/main.ts wires it): the
   * status says so, and the connection is rebuilt from scratch, whatever state the error left it
   * in; the calls on screen stay.
   */
  recoverFromFault(fault: Fault): void {
    this.connection.recoverFromFault(fault);
  }

  /**
   * The language changed (the composition root calls this on LocaleState.onChange): every view
   * that holds words is said again, so the tray and the windows follow at once.
   */
  languageChanged(): void {
    this.publishStatus();
    this.settingsListeners.emit(this.settingsView());
  }

  onStatus(listener: (status: StatusView) => void): () => void {
    return this.statusListeners.on(listener);
  }

  onSettings(listener: (view: SettingsView) => void): () => void {
    return this.settingsListeners.on(listener);
  }

  history(): HistoryItem[] {
    return this.d.history.list();
  }

  markHistorySeen(): void {
    this.d.history.markAllSeen();
  }

  /** Copies a history entry's caller number; false when the entry is gone. */
  /**
   * Whether a call link is confirmed: yes, unless the organisation's policy locked
   * `confirmDialLinks` to false. A user's own settings file cannot drop it (a program that can
   * write the user's files must not be able to make links dial silently).
   */
  private confirmDialLinks(): boolean {
    return this.d.managed?.locked.includes('confirmDialLinks') === true
      ? this.settingsService.settings().confirmDialLinks !== false
      : true;
  }

  /**
   * The phone system's call actions for the settings in force (issue 38): the composition root's
   * choice when it gives one, else the phone system's own API over the user's sign-in ("not
   * offered" where it has none: the standard service), or in organisation mode the relay's.
   */
  callControl(): CallControl {
    return this.d.callControl?.() ?? this.direct;
  }

  copyHistoryNumber(callId: string): boolean {
    const entry = this.d.history.item(callId);
    if (!entry) return false;
    this.d.views.clipboard.writeText(entry.from);
    return true;
  }

  /** Opens the CRM link for a history entry with the same builder and gate as the popup's. */
  openHistoryCrm(callId: string): Promise<{ ok: boolean; message?: string }> {
    // A voicemail or message opens the CRM for its caller too ({call_id} is the item's id).
    const entry = this.d.history.item(callId);
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

  pickContactsFile(path: string): Promise<ContactsFilePick> {
    return this.settingsService.pickContactsFile(path);
  }

  previewCrm(template: string): CrmPreview {
    return this.settingsService.previewCrm(template);
  }

  async saveSettings(patch: SettingsPatch): Promise<SaveResult> {
    const saved = await this.settingsService.save(patch);
    if (!saved.ok) return saved;
    await this.apply(saved.change);
    return { ok: true, view: this.settingsView() };
  }

  async testConnection(patch: SettingsPatch): Promise<TestConnectionResult> {
    const result = await this.settingsService.testConnection(patch);
    this.lastTest = { at: this.d.clock.now(), result };
    return result;
  }

  /** The last "Test connection" and when it ran (diagnostics). */
  lastConnectionTest(): { at: number; result: TestConnectionResult } | null {
    return this.lastTest;
  }

  /**
   * Settings' "Sign in with your organisation": the organisation's provider in the system browser,
   * for the relay and tenant in the form (the policy's when it locks them); on success the
   * settings go to organisation mode with that relay (the API key and secret leave this computer)
   * and the connection is rebuilt with the new sign-in.
   */
  signInToOrganisation(relay: OrgRelayPatch): Promise<OrgSignInResult> {
    return this.organisationStep(relay, (account, s) => account.signIn(s));
  }

  /** Settings' "Enrol": a one-time code from the administrator, for the form's relay and tenant. */
  enrolInOrganisation(relay: OrgRelayPatch, code: string): Promise<OrgSignInResult> {
    return this.organisationStep(relay, (account, s) => account.enrol(s, code.trim()));
  }

  /** Settings' Cancel while the browser is open. */
  cancelOrganisationSignIn(): void {
    this.d.organisation?.cancel();
  }

  /** Settings' "Sign out": forgets this computer's sign-in; calls stop until signed in again. */
  async signOutOfOrganisation(): Promise<SettingsView> {
    const settings = this.settingsService.settings();
    if (this.d.organisation && settings.relayUrl && settings.relayTenant)
      await this.d.organisation
        .signOut(settings)
        .catch((err: unknown) => this.logger.error('sign-out failed', { error: err }));
    await this.settingsService.prepare();
    await this.connection.rebuild();
    const view = this.settingsView();
    this.settingsListeners.emit(view);
    this.publishStatus();
    return view;
  }

  private async organisationStep(
    relay: OrgRelayPatch,
    step: (account: OrganisationAccount, settings: Settings) => Promise<unknown>,
  ): Promise<OrgSignInResult> {
    const refused = await runOrganisationStep(relay, step, {
      settings: this.settingsService,
      account: this.d.organisation,
      words: (this.d.words ?? PLAIN_ENGLISH).current(),
      managedBy: () => this.settingsView().managed?.by ?? '',
    });
    if (refused) return refused;
    const patch = organisationPatch(relay);
    // The new credential is a new secret: the connection is rebuilt even if no setting changed.
    const saved = await this.settingsService.update(patch, true);
    if (!saved.ok) return saved;
    await this.apply(saved.change);
    return { ok: true, view: this.settingsView() };
  }

  async startDemo(): Promise<SettingsView> {
    await this.settingsService.startDemo();
    const saved = await this.settingsService.update({ demoMode: true });
    if (saved.ok) await this.apply(saved.change);
    return this.settingsView();
  }

  async setDoNotDisturb(on: boolean): Promise<void> {
    const saved = await this.settingsService.update({ doNotDisturb: on });
    if (saved.ok) await this.apply(saved.change);
  }

  setPaused(paused: boolean): Promise<void> {
    return this.connection.setPaused(paused);
  }

  isPaused(): boolean {
    return this.connection.isPaused();
  }

  wake(reason: WakeReason): void {
    this.connection.wake(reason);
  }

  /** "Try again now" from the tray: resume if paused, else retry the connection at once. */
  retryNow(): Promise<void> {
    return this.connection.retryNow();
  }

  /** A saved change reaches the history, the directory, the popup and, if needed, the connection. */
  private async apply(change: SettingsChange): Promise<void> {
    const { before, after } = change;
    this.d.history.setLimit(after.historyLimit);
    this.directory.setDefaultRegion(after.defaultRegion);
    if (after.contactsFile !== before.contactsFile)
      await this.directory.loadContactsFile(after.contactsFile);
    if (change.crmSecretChanged || changedAmong(before, after, CRM_FIELDS)) this.crm.rebuild(after);
    this.presenter.refreshSettings();
    this.safely(() => this.d.onSettingsApplied?.(after));
    if (needsReconnect(change))
      await this.connection.rebuild(async () => {
        if (!after.demoMode) await this.settingsService.closeDemo();
      });
    this.settingsListeners.emit(this.settingsView());
    this.publishStatus();
  }

  /**
   * Settings' "Test lookup": `number` looked up with the form's CRM settings (not saved yet) and
   * the token typed in the form, else the one in the keychain; a fresh lookup, no cache.
   */
  async testCrmLookup(patch: SettingsPatch, number: string): Promise<CrmTestResult> {
    const checked = this.settingsService.check(patch.settings);
    if (!checked.ok) return { ok: false, message: checked.message };
    return this.crm.test(checked.settings, patch.crmSecret?.trim(), number);
  }

  /** The CRM lookup's figures for the diagnostics (never a number, a name or the token). */
  crmStats(): ReturnType<CrmLookup['stats']> | null {
    return this.crm.stats();
  }

  private publishStatus(): void {
    if (!this.settingsService.loaded()) return;
    const status = this.status();
    this.timeline.record(this.d.clock.now(), {
      ...status,
      state: status.paused ? 'paused' : status.state,
    });
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
