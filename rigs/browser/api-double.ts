/**
 * A test double of the preload's `window.screenpop`, typed by the same ScreenpopApi contract. It
 * is installed with page.addInitScript, so `installApiDouble` runs inside the page and must not
 * close over anything from Node: its only input is the serialisable fixture. It records every call,
 * lets the test push main->renderer events, and collects CSP violation reports.
 *
 * Two optional hooks, exposed from Node with page.exposeFunction, wire the CRM actions to the real
 * main-side builder: `__crmOpen(callId)` and `__crmPreview(template)`.
 *
 * Attended transfers under way are main's (calls:consultations): without a hook the double keeps
 * them as main does for the page's life (an attended transfer done: begun, named from the
 * fixture's colleagues; Complete, Cancel, Hang up or a blind transfer done: over) and pushes each
 * change; with `__callAction(method, args)` and `__consultations()` from Node, the Transfer
 * actions and the list are a real main side's, which outlives a reload of the page.
 */
import type {
  CallAction,
  CallActionView,
  RemoteAnswerView,
  CallCard,
  CallNoteInput,
  ContactsFilePick,
  CrmPreview,
  EventChannel,
  ExportResult,
  HistoryItem,
  LocaleView,
  OrgRelayPatch,
  OrgSignInResult,
  SaveResult,
  ScreenpopApi,
  CrmTestResult,
  SettingsPatch,
  SettingsView,
  StatusView,
  TestConnectionResult,
  Colleague,
  ConsultationView,
} from '../../src-main/ipc/contract.ts';

export interface DoubleFixture {
  calls: CallCard[];
  settings: SettingsView;
  status: StatusView;
  history: HistoryItem[];
  testConnection: TestConnectionResult;
  /** What saveSettings answers; null: accept the patch and merge it. */
  saveResult: SaveResult | null;
  /** What startDemo answers. */
  demoView: SettingsView;
  /** What exportHistoryCsv answers; null: saved, with the number of ids sent. */
  exportResult: ExportResult | null;
  /**
   * What signInToOrganisation and enrolInOrganisation answer; null: signed in (single sign-on as
   * alice@example.org, or an enrolled device), the view in organisation mode with the form's relay.
   * 'pending': the browser is open until cancelOrganisationSignIn.
   */
  orgResult: OrgSignInResult | null | 'pending';
  /** What chooseContactsFile answers (the native dialog's outcome in main). */
  contactsPick: ContactsFilePick;
  /** The language main tells the windows to speak. */
  locale: LocaleView['locale'];
  /** The call actions the phone system offers (issue 38); absent: none (the standard service). */
  offered?: CallAction[];
  /** What remoteAnswer answers per call id (remote answer, uaCSTA); absent: not offered. */
  remoteAnswer?: Record<string, RemoteAnswerView>;
  /** What every call action answers; absent: done. */
  callActionResult?: CallActionView;
  /**
   * The tenant's colleagues for Transfer's picker; findColleagues answers those whose extension
   * starts with, or name holds, what was typed (case-insensitive; the real ranking is the core's,
   * src-main/core/contacts/colleagues.ts), at most 8.
   */
  colleagues?: Colleague[];
  /** What testCrmLookup answers (Settings' Test lookup); absent: HubSpot found Ada Lovelace. */
  testCrmLookup?: CrmTestResult;
  /** What takeHistorySelection answers (a notification click while History opened); absent: null. */
  historySelection?: string | null;
  /** listHistory answers only when the test calls __double.releaseHistory(). */
  holdHistory?: boolean;
}

export interface RecordedCall {
  method: keyof ScreenpopApi;
  args: unknown[];
}

export interface DoubleHandle {
  recorded: RecordedCall[];
  violations: string[];
  emit(channel: EventChannel, payload: unknown): void;
  listenerCount(channel: EventChannel): number;
  /** Lets a held listHistory answer (fixture.holdHistory). */
  releaseHistory(): void;
}

export interface DoublePageGlobal {
  screenpop?: ScreenpopApi;
  __double?: DoubleHandle;
  __crmOpen?: (callId: string) => Promise<void>;
  __crmPreview?: (template: string) => Promise<CrmPreview>;
  __exportCsv?: (callIds: string[]) => Promise<void>;
  __callAction?: (
    method: string,
    args: unknown[],
  ) => Promise<{ view: CallActionView; consultations: ConsultationView[] }>;
  __consultations?: () => Promise<ConsultationView[]>;
  document: {
    addEventListener(
      type: 'securitypolicyviolation',
      listener: (event: {
        violatedDirective: string;
        blockedURI: string;
        sourceFile: string;
      }) => void,
    ): void;
  };
}

export function installApiDouble(fixture: DoubleFixture): void {
  type Listener = (payload: unknown) => void;
  const g = globalThis as unknown as DoublePageGlobal;
  const recorded: RecordedCall[] = [];
  const violations: string[] = [];
  const listeners = new Map<string, Set<Listener>>();
  const clone = <T>(value: T): T =>
    value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
  const record = (method: keyof ScreenpopApi, args: unknown[]): void => {
    recorded.push({ method, args: clone(args) });
  };
  const subscribe =
    (method: keyof ScreenpopApi, channel: EventChannel) =>
    (listener: Listener): (() => void) => {
      record(method, []);
      let set = listeners.get(channel);
      if (!set) listeners.set(channel, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    };
  let view: SettingsView = clone(fixture.settings);
  /** main's attended transfers under way, for the page's life (without the Node hooks). */
  let consulting: ConsultationView[] = [];
  const pushConsultations = (list: ConsultationView[]): void => {
    for (const listener of listeners.get('calls:consultations-changed') ?? [])
      listener(clone(list));
  };
  /** A call action as main answers it, with what it does to the consultations. */
  const callAction = async (method: string, args: unknown[]): Promise<CallActionView> => {
    if (g.__callAction) {
      const r = await g.__callAction(method, args);
      pushConsultations(r.consultations);
      return r.view;
    }
    const answer = clone(fixture.callActionResult ?? { ok: true as const });
    const callId = String(args[0]);
    const before = consulting;
    if (answer.ok && method === 'transferCall' && args[2] === 'attended') {
      const target = String(args[1]);
      const name = (fixture.colleagues ?? []).find((c) => c.extension === target)?.name ?? null;
      consulting = [
        ...consulting.filter((c) => c.callId !== callId),
        { callId, target, targetName: name, since: Date.now() },
      ];
    } else if (
      (answer.ok &&
        ['transferCall', 'completeTransfer', 'cancelTransfer', 'hangUp'].includes(method)) ||
      (!answer.ok && answer.refusal === 'no-such-call')
    )
      consulting = consulting.filter((c) => c.callId !== callId);
    if (consulting !== before) pushConsultations(consulting);
    return answer;
  };
  let releaseHistory: (() => void) | undefined;
  let cancelPending: (() => void) | undefined;
  /** Sign in or Enrol as main answers them, by the fixture. */
  const organisationAnswer = (
    relay: OrgRelayPatch,
    signedIn: { via: 'oidc' | 'device'; email: string | null },
  ): Promise<OrgSignInResult> => {
    if (fixture.orgResult === 'pending')
      return new Promise((resolve) => {
        cancelPending = () =>
          resolve({ ok: false, message: 'Sign-in cancelled.', cancelled: true });
      });
    if (fixture.orgResult) return Promise.resolve(clone(fixture.orgResult));
    view = {
      settings: { ...view.settings, ...relay, connectionMode: 'organisation', apiKey: '' },
      hasSecret: false,
      needsOnboarding: false,
      organisation: { signedIn },
    };
    return Promise.resolve({ ok: true, view: clone(view) });
  };

  const api = {
    popupReady: async () => (record('popupReady', []), clone(fixture.calls)),
    dismiss: async (callId: string) => void record('dismiss', [callId]),
    openCrm: async (callId: string) => {
      record('openCrm', [callId]);
      if (g.__crmOpen) await g.__crmOpen(callId);
    },
    copyNumber: async (callId: string) => void record('copyNumber', [callId]),
    saveNote: async (callId: string, note: CallNoteInput) => (
      record('saveNote', [callId, note]),
      true
    ),
    reportPopupSize: async (height: number) => void record('reportPopupSize', [height]),
    getStatus: async () => (record('getStatus', []), clone(fixture.status)),
    getLocale: async () => (record('getLocale', []), { locale: fixture.locale }),
    getSettings: async () => (record('getSettings', []), clone(view)),
    saveSettings: async (patch: SettingsPatch): Promise<SaveResult> => {
      record('saveSettings', [patch]);
      if (fixture.saveResult) return clone(fixture.saveResult);
      view = {
        settings: { ...view.settings, ...patch.settings },
        hasSecret: view.hasSecret || Boolean(patch.secret),
        needsOnboarding: false,
      };
      return { ok: true, view: clone(view) };
    },
    testConnection: async (patch: SettingsPatch) => (
      record('testConnection', [patch]),
      clone(fixture.testConnection)
    ),
    previewCrm: async (template: string): Promise<CrmPreview> => {
      record('previewCrm', [template]);
      if (g.__crmPreview) return g.__crmPreview(template);
      return { ok: true, url: `https://crm.example.com/search?phone=%2B14155550123` };
    },
    testCrmLookup: async (patch: SettingsPatch, number: string) => {
      record('testCrmLookup', [patch, number]);
      if (fixture.testCrmLookup) return clone(fixture.testCrmLookup);
      return {
        ok: true,
        message: 'HubSpot knows this number: Ada Lovelace.',
        found: { name: 'Ada Lovelace', company: 'Analytical Engines', recordUrl: null },
        ms: 180,
      };
    },
    startDemo: async () => {
      record('startDemo', []);
      view = clone(fixture.demoView);
      return clone(view);
    },
    signInToOrganisation: (relay: OrgRelayPatch) => {
      record('signInToOrganisation', [relay]);
      return organisationAnswer(relay, { via: 'oidc', email: 'alice@example.org' });
    },
    enrolInOrganisation: (relay: OrgRelayPatch, code: string) => {
      record('enrolInOrganisation', [relay, code]);
      return organisationAnswer(relay, { via: 'device', email: null });
    },
    cancelOrganisationSignIn: async () => {
      record('cancelOrganisationSignIn', []);
      cancelPending?.();
    },
    signOutOfOrganisation: async () => {
      record('signOutOfOrganisation', []);
      view = { ...view, needsOnboarding: true, organisation: { signedIn: null } };
      return clone(view);
    },
    listHistory: async () => {
      record('listHistory', []);
      // Held until the test lets it go (a slow first answer: a selection may come before it).
      if (fixture.holdHistory) await new Promise<void>((resolve) => (releaseHistory = resolve));
      return clone(fixture.history);
    },
    takeHistorySelection: async () => (
      record('takeHistorySelection', []),
      fixture.historySelection ?? null
    ),
    markHistorySeen: async () => void record('markHistorySeen', []),
    copyHistoryNumber: async (callId: string) => void record('copyHistoryNumber', [callId]),
    openHistoryCrm: async (callId: string) => {
      record('openHistoryCrm', [callId]);
      if (g.__crmOpen) await g.__crmOpen(callId);
    },
    exportHistoryCsv: async (callIds: string[]): Promise<ExportResult> => {
      record('exportHistoryCsv', [callIds]);
      if (g.__exportCsv) await g.__exportCsv(callIds);
      return fixture.exportResult
        ? clone(fixture.exportResult)
        : { status: 'saved', fileName: 'screenpop-calls.csv', count: callIds.length };
    },
    chooseContactsFile: async () => (record('chooseContactsFile', []), clone(fixture.contactsPick)),
    findColleagues: async (query: string) => {
      record('findColleagues', [query]);
      const q = query.trim().toLowerCase();
      if (!q) return [];
      return clone(
        (fixture.colleagues ?? [])
          .filter((c) => c.extension.startsWith(q) || c.name.toLowerCase().includes(q))
          .slice(0, 8),
      );
    },
    remoteAnswer: async (callId: string): Promise<RemoteAnswerView> => (
      record('remoteAnswer', [callId]),
      clone(fixture.remoteAnswer?.[callId] ?? { offered: false })
    ),
    consultations: async () => {
      record('consultations', []);
      return g.__consultations ? g.__consultations() : clone(consulting);
    },
    callActionsOffered: async () => (
      record('callActionsOffered', []),
      [...(fixture.offered ?? [])]
    ),
    ...Object.fromEntries(
      (
        [
          'callBack',
          'transferCall',
          'completeTransfer',
          'cancelTransfer',
          'hangUp',
          'answerCall',
          'declineCall',
          'callBackFromHistory',
          'dialNumber',
        ] as const
      ).map((method) => [
        method,
        async (...args: unknown[]): Promise<CallActionView> => {
          record(method, args);
          return callAction(method, args);
        },
      ]),
    ),
    closeWindow: async () => void record('closeWindow', []),
    reportError: async (report: unknown) => void record('reportError', [report]),
    onCalls: subscribe('onCalls', 'popup:calls'),
    onConsultations: subscribe('onConsultations', 'calls:consultations-changed'),
    onStatus: subscribe('onStatus', 'status:changed'),
    onHistory: subscribe('onHistory', 'history:changed'),
    onHistorySelect: subscribe('onHistorySelect', 'history:select'),
    onSettings: subscribe('onSettings', 'settings:changed'),
    onLocale: subscribe('onLocale', 'i18n:changed'),
  } as ScreenpopApi;

  g.screenpop = Object.freeze(api);
  g.__double = {
    recorded,
    violations,
    emit(channel, payload) {
      for (const listener of listeners.get(channel) ?? []) listener(clone(payload));
    },
    listenerCount: (channel) => listeners.get(channel)?.size ?? 0,
    releaseHistory: () => releaseHistory?.(),
  };
  g.document.addEventListener('securitypolicyviolation', (event) => {
    violations.push(
      `${event.violatedDirective} blocked ${event.blockedURI} in ${event.sourceFile}`,
    );
  });
}
