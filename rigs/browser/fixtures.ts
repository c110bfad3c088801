/** Data for the browser tests and screenshots: calls, settings views, history. */
import { formatNumber } from '../../src-main/core/numbers/phone-number.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import type {
  CallCard,
  CallOutcome,
  HistoryEntry,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from '../../src-main/ipc/contract.ts';
import type { DoubleFixture } from './api-double.ts';
import { describeError, ServiceError } from '../../src-shared/api/service-errors.ts';
import { render } from '../../src-shared/i18n/phrase.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';

/** Numbers as main's directory formats them (US user), so the fixtures show what the app shows. */
const shown = (raw: string) => formatNumber(raw, 'US');

const OUTCOME_OF_STATE: Record<string, CallOutcome> = {
  ringing: 'ringing',
  answered: 'answered',
  ended: 'missed',
};

export function call(overrides: Partial<CallCard> & { callId: string }): CallCard {
  const from = overrides.from ?? '+14155550123';
  const to = overrides.to ?? '101';
  const state = overrides.state ?? 'ringing';
  const startedAt = overrides.startedAt ?? Date.now() - 7_000;
  return {
    kind: 'call',
    from,
    fromDisplay: shown(from),
    callerName: 'Ada Lovelace',
    callerCompany: null,
    numberKind: null,
    nameSource: 'directory',
    crmLookup: null,
    group: null,
    to,
    toDisplay: shown(to),
    toName: null,
    startedAt,
    // A call that stopped ringing rang for 12 s.
    endedAt: state === 'ringing' ? null : startedAt + 12_000,
    state,
    outcome: OUTCOME_OF_STATE[state] ?? 'ended',
    canOpenCrm: true,
    ...overrides,
  };
}

export function entry(overrides: Partial<HistoryEntry> & { callId: string }): HistoryEntry {
  const from = overrides.from ?? '+14155550123';
  const to = overrides.to ?? '101';
  return {
    kind: 'call',
    from,
    fromDisplay: shown(from),
    callerName: null,
    callerCompany: null,
    numberKind: null,
    to,
    toDisplay: shown(to),
    toName: null,
    startedAt: Date.now() - 60_000,
    endedAt: Date.now() - 50_000,
    outcome: 'answered',
    seen: true,
    ...overrides,
  };
}

export const connectedView: SettingsView = {
  settings: {
    ...DEFAULT_SETTINGS,
    baseUrl: 'https://acme.example.com',
    apiKey: 'ak_live_3f9c',
    extensions: ['101', '102'],
    dids: ['+1 415 555 0100'],
    crmUrlTemplate: 'https://crm.example.com/search?phone={from}',
  },
  hasSecret: true,
  needsOnboarding: false,
};

/** A computer an organisation's policy manages: the connection, CRM and start-up locked. */
export const managedView: SettingsView = {
  ...connectedView,
  settings: {
    ...connectedView.settings,
    eventSource: 'relay',
    relayUrl: 'wss://relay.acme.example.com',
    relayTenant: 'acme',
    autoOpenCrm: true,
    startAtLogin: true,
  },
  managed: {
    by: 'Acme IT (helpdesk 4000)',
    locked: [
      'baseUrl',
      'apiKey',
      'eventSource',
      'relayUrl',
      'relayTenant',
      'crmUrlTemplate',
      'autoOpenCrm',
      'startAtLogin',
      'updates',
    ],
  },
};

/** Organisation mode, signed in by the organisation's single sign-on. */
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

/** A computer the policy puts in organisation mode (relay and tenant locked), not signed in yet. */
export const organisationManagedView: SettingsView = {
  ...organisationView,
  needsOnboarding: true,
  organisation: { signedIn: null },
  managed: {
    by: 'Acme IT (helpdesk 4000)',
    locked: ['connectionMode', 'relayUrl', 'relayTenant'],
  },
};

/** Signed in and connected: the relay said who this is. */
export const organisationStatus: StatusView = {
  state: 'connected',
  paused: false,
  doNotDisturb: false,
  missedCount: 0,
  demo: false,
  organisation: { user: 'alice', via: 'oidc', extensions: ['101'], signInNeeded: false },
};

/** Organisation mode without a sign-in, as main says it in the language of `t`. */
export function notSignedInStatus(t: Translator): StatusView {
  const fault = describeError(
    new ServiceError({ kind: 'sign-in', fault: 'not-signed-in', message: 'x' }),
  );
  return {
    state: 'needs-attention',
    reason: render(fault.words.reason, t),
    remedy: render(fault.words.remedy, t),
    paused: false,
    doNotDisturb: false,
    missedCount: 0,
    demo: false,
    organisation: { user: null, via: null, extensions: [], signInNeeded: true },
  };
}

/** A connection test that failed with 10004, naming the address to allow. */
export const ipNotAllowedTest: TestConnectionResult = {
  ok: false,
  message: 'The service refused this computer’s address.',
  remedy: 'Add the caller IP to the key’s allowlist.',
  errcode: 10004,
  ipToAllow: '203.0.113.7',
};

export const firstRunView: SettingsView = {
  settings: { ...DEFAULT_SETTINGS },
  hasSecret: false,
  needsOnboarding: true,
};

export const demoView: SettingsView = {
  settings: {
    ...DEFAULT_SETTINGS,
    demoMode: true,
    baseUrl: 'http://127.0.0.1:7801',
    apiKey: 'demo',
    extensions: ['101'],
  },
  hasSecret: true,
  needsOnboarding: false,
};

export const connectedStatus: StatusView = {
  state: 'connected',
  paused: false,
  doNotDisturb: false,
  missedCount: 0,
  demo: false,
};

export function history(now: number): HistoryEntry[] {
  const min = 60_000;
  return [
    entry({
      callId: 'h1',
      callerName: 'Ada Lovelace',
      startedAt: now - 3 * min,
      endedAt: null,
      outcome: 'ringing',
    }),
    entry({
      callId: 'h2',
      from: '+442079460958',
      to: '+14155550100',
      toName: 'Sales line',
      startedAt: now - 25 * min,
      endedAt: now - 24.5 * min,
      outcome: 'missed',
      seen: false,
    }),
    entry({
      callId: 'h3',
      from: '205',
      callerName: 'Grace Hopper',
      startedAt: now - 70 * min,
      endedAt: now - 62 * min,
      outcome: 'answered',
    }),
    entry({
      callId: 'h6',
      from: '+13125550175',
      callerName: 'Alan Turing',
      to: '+14155550100',
      toName: 'Sales line',
      startedAt: now - 95 * min,
      endedAt: now - 95 * min + 12_000,
      outcome: 'answered-elsewhere',
    }),
    entry({
      callId: 'h4',
      from: '+16175550199',
      callerName: 'Katherine Johnson',
      to: '+14155550100',
      toName: 'Sales line',
      startedAt: now - 26 * 60 * min,
      endedAt: now - 26 * 60 * min + 40_000,
      outcome: 'missed',
    }),
    entry({
      callId: 'h5',
      from: '+16505550144',
      to: '102',
      startedAt: now - 27 * 60 * min,
      endedAt: now - 27 * 60 * min + 95_000,
      outcome: 'ended',
    }),
  ];
}

export function fixture(overrides: Partial<DoubleFixture> = {}): DoubleFixture {
  return {
    calls: [],
    settings: connectedView,
    status: connectedStatus,
    history: history(Date.now()),
    testConnection: {
      ok: true,
      message: 'Signed in to https://acme.example.com.',
      extensionName: 'Ada Lovelace',
      extensionCount: 42,
    },
    saveResult: null,
    demoView,
    exportResult: null,
    orgResult: null,
    contactsPick: { status: 'cancelled' },
    locale: 'en',
    ...overrides,
  };
}
