/** Helpers for the Electron adapter tests (the electron module itself is test/support/electron-mock.ts). */
import type { BrowserWindow as BrowserWindowType, BrowserWindowConstructorOptions } from 'electron';
import type { CallCard } from '../../src-main/ipc/contract.ts';
import { BrowserWindow } from '../support/electron-mock.ts';

/** A factory that builds fake windows but hands them out typed as Electron's. */
export function fakeWindowFactory(): {
  create: (options: BrowserWindowConstructorOptions) => BrowserWindowType;
  last: () => BrowserWindow;
} {
  let last: BrowserWindow | null = null;
  return {
    create: (options) => {
      last = new BrowserWindow(options as Record<string, unknown>);
      return last as unknown as BrowserWindowType;
    },
    last: () => {
      if (!last) throw new Error('no window created');
      return last;
    },
  };
}

export function card(callId: string, overrides: Partial<CallCard> = {}): CallCard {
  return {
    kind: 'call',
    callId,
    from: '+14155550123',
    fromDisplay: '(415) 555-0123',
    callerName: 'Ada Lovelace',
    callerCompany: null,
    numberKind: null,
    nameSource: 'directory',
    crmLookup: null,
    group: null,
    to: '101',
    toDisplay: '101',
    toName: null,
    startedAt: 1,
    endedAt: null,
    state: 'ringing',
    outcome: 'ringing',
    canOpenCrm: false,
    ...overrides,
  };
}
