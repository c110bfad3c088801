/**
 * A ScreenpopApi for component tests: every request is a vi.fn with a sensible answer, and `emit`
 * pushes main->renderer events to whoever subscribed.
 */
import { vi } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { featuresNotOffered } from '../../src-shared/wire/index.ts';
import type {
  EventChannel,
  IpcEventMap,
  ScreenpopApi,
  SettingsView,
  StatusView,
} from '../../src-main/ipc/contract.ts';

export const savedView: SettingsView = {
  settings: {
    ...DEFAULT_SETTINGS,
    baseUrl: 'https://acme.example.com',
    apiKey: 'ak_1',
    extensions: ['101'],
  },
  hasSecret: true,
  needsOnboarding: false,
  // As main says it (settings-service.ts view()): from each phone system's wire dialect.
  notOffered: featuresNotOffered(),
};

/** Organisation mode, signed in by single sign-on. */
export const organisationView: SettingsView = {
  settings: {
    ...DEFAULT_SETTINGS,
    connectionMode: 'organisation',
    relayUrl: 'wss://relay.acme.example.com',
    relayTenant: 'acme',
  },
  hasSecret: false,
  needsOnboarding: false,
  organisation: { signedIn: { via: 'oidc', email: 'alice@example.org' } },
};

export const status: StatusView = {
  state: 'connected',
  paused: false,
  doNotDisturb: false,
  missedCount: 0,
  demo: false,
};

export function fakeApi(view: SettingsView = savedView) {
  const listeners = new Map<EventChannel, Set<(payload: never) => void>>();
  const on =
    <C extends EventChannel>(channel: C) =>
    (listener: IpcEventMap[C]) => {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      const set = listeners.get(channel) as Set<(payload: never) => void>;
      set.add(listener as (payload: never) => void);
      return () => void set.delete(listener as (payload: never) => void);
    };
  const api = {
    popupReady: vi.fn<ScreenpopApi['popupReady']>(async () => []),
    dismiss: vi.fn<ScreenpopApi['dismiss']>(async () => undefined),
    openCrm: vi.fn<ScreenpopApi['openCrm']>(async () => undefined),
    copyNumber: vi.fn<ScreenpopApi['copyNumber']>(async () => undefined),
    saveNote: vi.fn<ScreenpopApi['saveNote']>(async () => true),
    reportPopupSize: vi.fn<ScreenpopApi['reportPopupSize']>(async () => undefined),
    getStatus: vi.fn<ScreenpopApi['getStatus']>(async () => status),
    getLocale: vi.fn<ScreenpopApi['getLocale']>(async () => ({ locale: 'en' as const })),
    getSettings: vi.fn<ScreenpopApi['getSettings']>(async () => view),
    saveSettings: vi.fn<ScreenpopApi['saveSettings']>(async () => ({ ok: true, view: savedView })),
    testConnection: vi.fn<ScreenpopApi['testConnection']>(async () => ({
      ok: true,
      message: 'Signed in.',
    })),
    previewCrm: vi.fn<ScreenpopApi['previewCrm']>(async (template: string) => ({
      ok: true as const,
      url: template.replace('{from}', '%2B14155550123'),
    })),
    testCrmLookup: vi.fn<ScreenpopApi['testCrmLookup']>(async () => ({
      ok: true,
      message: 'HubSpot knows this number: Ada Lovelace.',
      found: { name: 'Ada Lovelace', company: 'Analytical Engines', recordUrl: null },
      ms: 180,
    })),
    startDemo: vi.fn<ScreenpopApi['startDemo']>(async () => ({
      ...savedView,
      settings: { ...savedView.settings, demoMode: true },
    })),
    signInToOrganisation: vi.fn<ScreenpopApi['signInToOrganisation']>(async () => ({
      ok: true,
      view: organisationView,
    })),
    enrolInOrganisation: vi.fn<ScreenpopApi['enrolInOrganisation']>(async () => ({
      ok: true,
      view: organisationView,
    })),
    cancelOrganisationSignIn: vi.fn<ScreenpopApi['cancelOrganisationSignIn']>(
      async () => undefined,
    ),
    signOutOfOrganisation: vi.fn<ScreenpopApi['signOutOfOrganisation']>(async () => ({
      ...organisationView,
      organisation: { signedIn: null },
    })),
    listHistory: vi.fn<ScreenpopApi['listHistory']>(async () => []),
    markHistorySeen: vi.fn<ScreenpopApi['markHistorySeen']>(async () => undefined),
    copyHistoryNumber: vi.fn<ScreenpopApi['copyHistoryNumber']>(async () => undefined),
    openHistoryCrm: vi.fn<ScreenpopApi['openHistoryCrm']>(async () => undefined),
    callBackFromHistory: vi.fn<ScreenpopApi['callBackFromHistory']>(async () => ({ ok: true })),
    takeHistorySelection: vi.fn<ScreenpopApi['takeHistorySelection']>(async () => null),
    dialNumber: vi.fn<ScreenpopApi['dialNumber']>(async () => ({ ok: true })),
    // Nothing offered by default (the standard service): buttons show only where a test offers.
    callActionsOffered: vi.fn<ScreenpopApi['callActionsOffered']>(async () => []),
    callBack: vi.fn<ScreenpopApi['callBack']>(async () => ({ ok: true })),
    transferCall: vi.fn<ScreenpopApi['transferCall']>(async () => ({ ok: true })),
    hangUp: vi.fn<ScreenpopApi['hangUp']>(async () => ({ ok: true })),
    completeTransfer: vi.fn<ScreenpopApi['completeTransfer']>(async () => ({ ok: true })),
    cancelTransfer: vi.fn<ScreenpopApi['cancelTransfer']>(async () => ({ ok: true })),
    consultations: vi.fn<ScreenpopApi['consultations']>(async () => []),
    findColleagues: vi.fn<ScreenpopApi['findColleagues']>(async () => []),
    answerCall: vi.fn<ScreenpopApi['answerCall']>(async () => ({ ok: true })),
    declineCall: vi.fn<ScreenpopApi['declineCall']>(async () => ({ ok: true })),
    remoteAnswer: vi.fn<ScreenpopApi['remoteAnswer']>(async () => ({ offered: true })),
    exportHistoryCsv: vi.fn<ScreenpopApi['exportHistoryCsv']>(async (ids: string[]) => ({
      status: 'saved' as const,
      fileName: 'calls.csv',
      count: ids.length,
    })),
    chooseContactsFile: vi.fn<ScreenpopApi['chooseContactsFile']>(async () => ({
      status: 'cancelled' as const,
    })),
    closeWindow: vi.fn<ScreenpopApi['closeWindow']>(async () => undefined),
    reportError: vi.fn<ScreenpopApi['reportError']>(async () => undefined),
    onCalls: vi.fn<ScreenpopApi['onCalls']>(on('popup:calls')),
    onConsultations: vi.fn<ScreenpopApi['onConsultations']>(on('calls:consultations-changed')),
    onStatus: vi.fn<ScreenpopApi['onStatus']>(on('status:changed')),
    onHistory: vi.fn<ScreenpopApi['onHistory']>(on('history:changed')),
    onHistorySelect: vi.fn<ScreenpopApi['onHistorySelect']>(on('history:select')),
    onSettings: vi.fn<ScreenpopApi['onSettings']>(on('settings:changed')),
    onLocale: vi.fn<ScreenpopApi['onLocale']>(on('i18n:changed')),
  } satisfies ScreenpopApi;
  function emit<C extends EventChannel>(channel: C, payload: Parameters<IpcEventMap[C]>[0]): void {
    for (const listener of listeners.get(channel) ?? [])
      (listener as (p: typeof payload) => void)(payload);
  }
  return { api, emit, listeners };
}
