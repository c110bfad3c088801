/** Data for the browser tests and screenshots: calls, settings views, history. */
import { DEFAULT_SETTINGS } from '../../../src-main/core/settings/types.ts';
import type {
  CallCard,
  HistoryEntry,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from '../../../src-main/ipc/contract.ts';
import type { DoubleFixture } from './api-double.ts';

export function call(overrides: Partial<CallCard> & { callId: string }): CallCard {
  const state = overrides.state ?? 'ringing';
  return {
    kind: 'call',
    from: '+14155550123',
    fromDisplay: '+1 415-555-0123',
    callerName: 'Ada Lovelace',
    to: '101',
    toDisplay: 'Ext. 101',
    toName: null,
    startedAt: Date.now() - 7_000,
    endedAt: null,
    state,
    outcome: state === 'ringing' ? 'ringing' : 'answered',
    canOpenCrm: true,
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
    {
      kind: 'call',
      callId: 'h1',
      from: '+14155550123',
      fromDisplay: '+1 415-555-0123',
      callerName: 'Ada Lovelace',
      to: '101',
      toDisplay: '101',
      toName: null,
      startedAt: now - 3 * min,
      endedAt: null,
      outcome: 'ringing',
      seen: true,
    },
    {
      kind: 'call',
      callId: 'h2',
      from: '+442079460958',
      fromDisplay: '+44 20 7946 0958',
      callerName: null,
      to: '101',
      toDisplay: '101',
      toName: null,
      startedAt: now - 25 * min,
      endedAt: now - 24.5 * min,
      outcome: 'missed',
      seen: false,
    },
    {
      kind: 'call',
      callId: 'h3',
      from: '205',
      fromDisplay: '205',
      callerName: 'Grace Hopper',
      to: '101',
      toDisplay: '101',
      toName: null,
      startedAt: now - 70 * min,
      endedAt: now - 62 * min,
      outcome: 'answered',
      seen: true,
    },
    {
      kind: 'call',
      callId: 'h4',
      from: '+16175550199',
      fromDisplay: '+1 617-555-0199',
      callerName: 'Katherine Johnson',
      to: '+1 415 555 0100',
      toDisplay: '+1 415 555 0100',
      toName: null,
      startedAt: now - 26 * 60 * min,
      endedAt: now - 26 * 60 * min + 40_000,
      outcome: 'missed',
      seen: true,
    },
    {
      kind: 'call',
      callId: 'h5',
      from: '+16505550144',
      fromDisplay: '+1 650-555-0144',
      callerName: null,
      to: '102',
      toDisplay: '102',
      toName: null,
      startedAt: now - 27 * 60 * min,
      endedAt: now - 27 * 60 * min + 95_000,
      outcome: 'ended',
      seen: true,
    },
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
    contactsPick: { status: 'cancelled' },
    ...overrides,
  };
}
