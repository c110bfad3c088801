import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { IpcMain, WebContents } from 'electron';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { ipcHandlers, type IpcContext } from '../../src-main/electron/ipc-handlers.ts';
import { send, TypedIpcMain } from '../../src-main/electron/ipc-main.ts';
import { INVOKE_CHANNELS } from '../../src-main/ipc/contract.ts';
import { CHANNEL_PAGES } from '../../src-main/electron/ipc-pages.ts';
import { INVOKE_VALIDATORS } from '../../src-main/electron/ipc-validate.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { BrowserWindow, ipcMain, resetElectronMock } from '../support/electron-mock.ts';

const origin = new AppOrigin(null);

function setup() {
  resetElectronMock();
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const popup = new BrowserWindow();
  void popup.loadURL(origin.pageUrl('popup'));
  const settings = new BrowserWindow();
  void settings.loadURL(origin.pageUrl('settings'));
  const foreign = new BrowserWindow();
  void foreign.loadURL('https://evil.example/popup.html');
  const ours = new Set<unknown>([popup.webContents, settings.webContents]);
  const ipc = new TypedIpcMain(
    ipcMain as unknown as IpcMain,
    { isOurWebContents: (c: WebContents) => ours.has(c), pageOf: (u) => origin.pageOf(u) },
    logger,
  );
  const dismissed: string[] = [];
  ipc.handle('popup:dismiss', (_e, callId) => {
    dismissed.push(callId);
  });
  const notes: unknown[][] = [];
  ipc.handle('popup:save-note', (_e, callId, note) => {
    notes.push([callId, note]);
    return true;
  });
  ipc.handle('settings:save', () => {
    throw new Error('keychain said no for secret-value-123456');
  });
  secrets.add('secret-value-123456');
  return { logger, popup, settings, foreign, dismissed, notes, ipc };
}

describe('IPC sender checks', () => {
  let t: ReturnType<typeof setup>;
  beforeEach(() => {
    t = setup();
  });

  it('runs the handler for our own page', async () => {
    await ipcMain.invoke('popup:dismiss', { sender: t.popup.webContents }, 'c1');
    expect(t.dismissed).toEqual(['c1']);
  });

  it.each([
    ['a foreign window', () => ({ sender: t.foreign.webContents })],
    [
      'a foreign window claiming our URL',
      () => ({ sender: t.foreign.webContents, frameUrl: 'app://screenpop/popup.html' }),
    ],
    [
      'our window navigated elsewhere',
      () => ({ sender: t.popup.webContents, frameUrl: 'https://evil.example/' }),
    ],
    [
      'a file:// page',
      () => ({ sender: t.popup.webContents, frameUrl: 'file:///app/dist/renderer/popup.html' }),
    ],
    [
      'a look-alike host',
      () => ({ sender: t.popup.webContents, frameUrl: 'app://screenpop.evil/popup.html' }),
    ],
    [
      'user-info trick',
      () => ({ sender: t.popup.webContents, frameUrl: 'app://screenpop@evil/popup.html' }),
    ],
    [
      'a subframe',
      () => ({
        sender: t.popup.webContents,
        frame: {
          url: 'app://screenpop/popup.html',
          parent: { url: 'app://screenpop/popup.html', parent: null },
        },
      }),
    ],
    ['a destroyed frame', () => ({ sender: t.popup.webContents, frame: null })],
    ['our settings page using a popup channel', () => ({ sender: t.settings.webContents })],
  ])('ignores and logs %s', async (_name, from) => {
    const result = await ipcMain.invoke('popup:dismiss', from(), 'c1');
    expect(result).toBeUndefined();
    expect(t.dismissed).toEqual([]);
    expect(
      t.logger.records.some((r) => r.level === 'warn' && r.msg.includes('untrusted sender')),
    ).toBe(true);
  });

  it('refuses arguments of the wrong type or size before the handler', async () => {
    const from = { sender: t.popup.webContents };
    await expect(ipcMain.invoke('popup:dismiss', from, 42)).rejects.toThrow(
      'Invalid arguments for popup:dismiss',
    );
    await expect(ipcMain.invoke('popup:dismiss', from, 'x'.repeat(1000))).rejects.toThrow(
      'Invalid arguments',
    );
    await expect(ipcMain.invoke('popup:dismiss', from, 'a', 'b')).rejects.toThrow(
      'Invalid arguments',
    );
    expect(t.dismissed).toEqual([]);
  });

  it('never sends handler error details (or secrets) to the renderer, and logs them redacted', async () => {
    const err = await ipcMain
      .invoke('settings:save', { sender: t.settings.webContents }, { settings: {} })
      .catch((e: Error) => e);
    expect((err as Error).message).toBe('settings:save failed');
    const logged = JSON.stringify(t.logger.records);
    expect(logged).toContain('keychain said no');
    expect(logged).not.toContain('secret-value-123456');
  });

  it('popup:save-note: only from the popup, a note of at most 2,000 characters, exactly its fields', async () => {
    const from = { sender: t.popup.webContents };
    const note = { text: 'Wants a quote', disposition: 'Follow-up', submit: true };
    expect(await ipcMain.invoke('popup:save-note', from, 'c1', note)).toBe(true);
    expect(
      await ipcMain.invoke('popup:save-note', { sender: t.settings.webContents }, 'c1', note),
    ).toBeUndefined();
    const bad: unknown[][] = [
      ['c1', { ...note, text: 'x'.repeat(2001) }],
      ['c1', { ...note, text: 7 }],
      ['c1', { ...note, disposition: 'x'.repeat(41) }],
      ['c1', { ...note, disposition: ['Follow-up'] }],
      ['c1', { ...note, submit: 'yes' }],
      ['c1', { ...note, html: '<b>' }],
      ['c1', 'Wants a quote'],
      ['c1', null],
      [42, note],
      ['c1'],
    ];
    for (const args of bad)
      await expect(ipcMain.invoke('popup:save-note', from, ...args)).rejects.toThrow(
        'Invalid arguments for popup:save-note',
      );
    expect(t.notes).toEqual([['c1', note]]);
    expect(
      INVOKE_VALIDATORS['popup:save-note']([
        'c1',
        { text: 'x'.repeat(2000), disposition: null, submit: false },
      ]),
    ).toEqual(['c1', { text: 'x'.repeat(2000), disposition: null, submit: false }]);
  });

  it('validates settings patches: object shape, known fields, sizes', () => {
    const v = INVOKE_VALIDATORS['settings:save'];
    expect(v([{ settings: { doNotDisturb: true }, secret: 's' }])).toEqual([
      { settings: { doNotDisturb: true }, secret: 's' },
    ]);
    expect(() => v([{ settings: {}, evil: 1 }])).toThrow();
    expect(() => v([{ settings: [] }])).toThrow();
    expect(() => v([{ settings: {}, secret: 7 }])).toThrow();
    expect(() => v([{ settings: { crmUrlTemplate: 'x'.repeat(70_000) } }])).toThrow();
    expect(() => INVOKE_VALIDATORS['popup:content-size']([Number.NaN])).toThrow();
    expect(INVOKE_VALIDATORS['popup:content-size']([240])).toEqual([240]);
  });

  it('validates the history and contacts-file channels before any dialog opens', () => {
    const exportCsv = INVOKE_VALIDATORS['history:export-csv'];
    expect(exportCsv([['c1', 'c2']])).toEqual([['c1', 'c2']]);
    expect(exportCsv([[]])).toEqual([[]]);
    expect(() => exportCsv(['c1'])).toThrow();
    expect(() => exportCsv([['c1', 7]])).toThrow();
    expect(() => exportCsv([['x'.repeat(257)]])).toThrow();
    expect(() => exportCsv([Array.from({ length: 10_001 }, (_, i) => `c${i}`)])).toThrow();
    expect(() => exportCsv([['c1'], ['c2']])).toThrow();
    expect(INVOKE_VALIDATORS['settings:choose-contacts-file']([])).toEqual([]);
    // The page may not suggest a path, a filter or a folder to the dialog.
    expect(() => INVOKE_VALIDATORS['settings:choose-contacts-file'](['/etc/passwd'])).toThrow();
    expect(() => INVOKE_VALIDATORS['history:copy-number']([{ callId: 'c1' }])).toThrow();
    expect(() => INVOKE_VALIDATORS['history:open-crm']([])).toThrow();
  });

  it('organisation sign-in: only the settings page, exactly a relay address and tenant (and a code), before the browser opens', async () => {
    const relay = { relayUrl: 'wss://relay.acme.example.com', relayTenant: 'acme' };
    const signedIn: unknown[] = [];
    t.ipc.handle('org:sign-in', (_e, r) => {
      signedIn.push(r);
      return { ok: false, message: 'x' };
    });
    // The popup (a caller's text is on it) cannot start a sign-in.
    expect(await ipcMain.invoke('org:sign-in', { sender: t.popup.webContents }, relay)).toBe(
      undefined,
    );
    await expect(
      ipcMain.invoke('org:sign-in', { sender: t.settings.webContents }, { ...relay, issuer: 'x' }),
    ).rejects.toThrow('Invalid arguments');
    await ipcMain.invoke('org:sign-in', { sender: t.settings.webContents }, relay);
    expect(signedIn).toEqual([relay]);
    for (const c of ['org:sign-in', 'org:enrol', 'org:cancel-sign-in', 'org:sign-out'] as const)
      expect(CHANNEL_PAGES[c]).toEqual(['settings']);
    const enrol = INVOKE_VALIDATORS['org:enrol'];
    expect(enrol([relay, 'K7QX-2M4P-ZR9T'])).toEqual([relay, 'K7QX-2M4P-ZR9T']);
    expect(() => enrol([relay])).toThrow();
    expect(() => enrol([relay, 'x'.repeat(65)])).toThrow();
    expect(() => enrol([{ relayUrl: relay.relayUrl }, 'K7'])).toThrow();
    expect(() => INVOKE_VALIDATORS['org:sign-in']([{ ...relay, relayTenant: 7 }])).toThrow();
    expect(() =>
      INVOKE_VALIDATORS['org:sign-in']([{ ...relay, relayUrl: 'x'.repeat(2049) }]),
    ).toThrow();
    expect(() => INVOKE_VALIDATORS['org:sign-out'](['now'])).toThrow();
    expect(() => INVOKE_VALIDATORS['org:cancel-sign-in']([1])).toThrow();
  });

  it('renderer errors: one channel, sender checked, exact fields, sizes capped, logged scrubbed', async () => {
    t.ipc.handle(
      'renderer:error',
      ipcHandlers({ logger: t.logger } as unknown as IpcContext)['renderer:error'],
    );
    const report = {
      kind: 'render',
      name: 'TypeError',
      message: 'failed with secret-value-123456',
      stack: `TypeError: failed\n    at x (app://screenpop/assets/popup.js:1:2?k=secret-value-123456)`,
      componentStack: '\n    at CallCardView',
    };
    await ipcMain.invoke('renderer:error', { sender: t.popup.webContents }, report);
    const logged = t.logger.records.find((r) => r.msg === 'error in a window');
    expect(logged).toMatchObject({
      level: 'error',
      page: 'popup.html',
      kind: 'render',
      error: { name: 'TypeError', componentStack: '\n    at CallCardView' },
    });
    expect(JSON.stringify(t.logger.records)).not.toContain('secret-value-123456');
    // A foreign page cannot write to the log through it.
    await ipcMain.invoke('renderer:error', { sender: t.foreign.webContents }, report);
    expect(t.logger.records.filter((r) => r.msg === 'error in a window')).toHaveLength(1);
    const v = INVOKE_VALIDATORS['renderer:error'];
    await expect(
      ipcMain.invoke('renderer:error', { sender: t.popup.webContents }, { ...report, extra: 1 }),
    ).rejects.toThrow('Invalid arguments');
    expect(() => v([{ ...report, kind: 'fatal' }])).toThrow();
    expect(() => v([{ ...report, message: 42 }])).toThrow();
    expect(() => v([report, report])).toThrow();
    const [big] = v([{ ...report, message: 'm'.repeat(1e6), stack: 's'.repeat(1e6) }]);
    expect(big.message.length).toBeLessThanOrEqual(2001);
    expect(big.stack!.length).toBeLessThanOrEqual(8001);
    expect(CHANNEL_PAGES['renderer:error']).toEqual(['popup', 'settings', 'history', 'dial']);
  });

  it('gives the dialogs and history actions to the one page that needs each', () => {
    expect(CHANNEL_PAGES['history:export-csv']).toEqual(['history']);
    expect(CHANNEL_PAGES['history:copy-number']).toEqual(['history']);
    expect(CHANNEL_PAGES['history:open-crm']).toEqual(['history']);
    expect(CHANNEL_PAGES['settings:choose-contacts-file']).toEqual(['settings']);
  });

  it('has a validator and page rights for every channel of the contract', () => {
    for (const c of INVOKE_CHANNELS) {
      expect(typeof INVOKE_VALIDATORS[c]).toBe('function');
      expect(CHANNEL_PAGES[c].length).toBeGreaterThan(0);
    }
  });

  it('send() skips destroyed windows', async () => {
    await new Promise<void>((resolve) => setImmediate(resolve)); // the page loads
    send(t.popup as never, 'popup:calls', []);
    expect(t.popup.webContents.lastSent('popup:calls')).toEqual([[]]);
    t.popup.destroy();
    send(t.popup as never, 'popup:calls', []);
    expect(t.popup.contents.sent).toHaveLength(1);
  });
});
