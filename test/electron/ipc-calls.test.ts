/**
 * The call actions' IPC channels (issue 38): the real handlers over the real CallActions, with a
 * CallControl built as a plain object (the port's far side). A foreign sender or a page without
 * the right is ignored, bad arguments never reach the phone system, a card's number comes from
 * main (never the page), and a refusal reaches the page in the user's language.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { IpcMain, WebContents } from 'electron';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { ipcHandlers, type IpcContext } from '../../src-main/electron/ipc-handlers.ts';
import { TypedIpcMain } from '../../src-main/electron/ipc-main.ts';
import { CallActions, type CallActionsDeps } from '../../src-main/core/calls/call-actions.ts';
import { Consultations } from '../../src-main/core/calls/consultations.ts';
import { callRefusalOf } from '../../src-shared/api/call-api.ts';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { findColleagues } from '../../src-main/core/contacts/colleagues.ts';
import { notOfferedCallControl } from '../../src-main/core/calls/not-offered.ts';
import type { CallAction, CallControl } from '../../src-main/core/ports/call-control.ts';
import { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { BrowserWindow, ipcMain, resetElectronMock } from '../support/electron-mock.ts';

const origin = new AppOrigin(null);

function yeastarLike(offered: CallAction[]) {
  const done: string[] = [];
  const control: CallControl = {
    offered: () => new Set(offered),
    dial: async (n) => (done.push(`dial ${n}`), { ok: true, callId: 'pbx-1' }),
    transfer: async (id, to, mode) => (done.push(`transfer ${id} ${to} ${mode}`), { ok: true }),
    hangup: async (id) => (done.push(`hangup ${id}`), { ok: true }),
    completeTransfer: async (id) => (done.push(`complete ${id}`), { ok: true }),
    cancelTransfer: async (id) => (done.push(`cancel ${id}`), { ok: true }),
    answer: async (id) => (done.push(`answer ${id}`), { ok: true }),
    decline: async (id) => (done.push(`decline ${id}`), { ok: true }),
  };
  return { control, done };
}

function setup(
  control: CallControl,
  locale: 'en' | 'ar' = 'en',
  more: Partial<CallActionsDeps> = {},
) {
  resetElectronMock();
  const logger = memoryLogger(new SecretRegistry());
  const popup = new BrowserWindow();
  void popup.loadURL(origin.pageUrl('popup'));
  const history = new BrowserWindow();
  void history.loadURL(origin.pageUrl('history'));
  const settings = new BrowserWindow();
  void settings.loadURL(origin.pageUrl('settings'));
  const dial = new BrowserWindow();
  void dial.loadURL(origin.pageUrl('dial'));
  const foreign = new BrowserWindow();
  void foreign.loadURL('https://evil.example/popup.html');
  const ours = new Set<unknown>([
    popup.webContents,
    history.webContents,
    settings.webContents,
    dial.webContents,
  ]);
  const ipc = new TypedIpcMain(
    ipcMain as unknown as IpcMain,
    { isOurWebContents: (c: WebContents) => ours.has(c), pageOf: (u) => origin.pageOf(u) },
    logger,
  );
  const calls = new CallActions({
    control: () => control,
    region: () => 'GB',
    popupNumber: (id) => (id === 'card-1' ? '020 7946 0000' : undefined),
    historyNumber: (id) => (id === 'h-1' ? '+14155550123' : undefined),
    confirmDialLinks: () => true,
    // The directory's extension index as it keys it; 201 is the user's own extension.
    colleagues: (query) =>
      findColleagues(
        new Map([
          ['ext:201', 'Me Myself'],
          ['ext:204', 'Bob Stone'],
          ['ext:215', 'Zoë Bowman'],
          ['+441234567890', 'Not an extension'],
        ]),
        query,
        ['201'],
      ),
    logger,
    ...more,
  });
  const language = new LocaleState(locale, logger);
  ipc.handleAll(ipcHandlers({ runtime: { calls }, language, logger } as unknown as IpcContext));
  return { logger, popup, history, settings, dial, foreign };
}

describe('call actions over IPC', () => {
  let pbx: ReturnType<typeof yeastarLike>;
  let t: ReturnType<typeof setup>;
  beforeEach(() => {
    pbx = yeastarLike(['dial', 'transfer', 'hangup']);
    t = setup(pbx.control);
  });

  it('offers the phone system’s actions to the popup and History, in a fixed order', async () => {
    expect(await ipcMain.invoke('calls:offered', { sender: t.popup.webContents })).toEqual([
      'dial',
      'transfer',
      'hangup',
    ]);
    expect(await ipcMain.invoke('calls:offered', { sender: t.history.webContents })).toHaveLength(
      3,
    );
  });

  it('calls back the number main holds for the card, as the user’s phone would dial it', async () => {
    const r = await ipcMain.invoke('popup:call-back', { sender: t.popup.webContents }, 'card-1');
    expect(r).toEqual({ ok: true });
    const h = await ipcMain.invoke('history:call-back', { sender: t.history.webContents }, 'h-1');
    expect(h).toEqual({ ok: true });
    expect(pbx.done).toEqual(['dial 02079460000', 'dial +14155550123']);
  });

  it('transfers blind to an extension or a number; hangs up', async () => {
    const from = { sender: t.popup.webContents };
    expect(await ipcMain.invoke('popup:transfer', from, 'call-9', '204', 'blind')).toEqual({
      ok: true,
    });
    expect(await ipcMain.invoke('popup:transfer', from, 'call-9', '07700 900123', 'blind')).toEqual(
      {
        ok: true,
      },
    );
    expect(await ipcMain.invoke('popup:hangup', from, 'call-9')).toEqual({ ok: true });
    expect(pbx.done).toEqual([
      'transfer call-9 204 blind',
      'transfer call-9 07700900123 blind',
      'hangup call-9',
    ]);
  });

  it('consults first (attended), then completes or cancels; the picker finds colleagues by name or extension', async () => {
    const from = { sender: t.popup.webContents };
    expect(await ipcMain.invoke('popup:transfer', from, 'call-9', '204', 'attended')).toEqual({
      ok: true,
    });
    expect(await ipcMain.invoke('popup:complete-transfer', from, 'call-9')).toEqual({ ok: true });
    expect(await ipcMain.invoke('popup:cancel-transfer', from, 'call-8')).toEqual({ ok: true });
    expect(pbx.done).toEqual(['transfer call-9 204 attended', 'complete call-9', 'cancel call-8']);
    // Any word of the name, without accents; the user's own extension and non-extensions never.
    expect(await ipcMain.invoke('popup:colleagues', from, 'bo')).toEqual([
      { extension: '204', name: 'Bob Stone' },
      { extension: '215', name: 'Zoë Bowman' },
    ]);
    expect(await ipcMain.invoke('popup:colleagues', from, 'zoe')).toEqual([
      { extension: '215', name: 'Zoë Bowman' },
    ]);
    expect(await ipcMain.invoke('popup:colleagues', from, '2')).toEqual([
      { extension: '204', name: 'Bob Stone' },
      { extension: '215', name: 'Zoë Bowman' },
    ]);
    expect(
      await ipcMain.invoke('popup:colleagues', { sender: t.history.webContents }, 'bo'),
    ).toBeUndefined();
  });

  it('has no colleagues to offer and completes nothing where Transfer is not offered', async () => {
    const none = setup(yeastarLike(['dial']).control);
    const from = { sender: none.popup.webContents };
    expect(await ipcMain.invoke('popup:colleagues', from, 'bo')).toEqual([]);
    expect(await ipcMain.invoke('popup:complete-transfer', from, 'call-9')).toMatchObject({
      ok: false,
      refusal: 'not-offered',
      message: 'Calling from Screenpop is not offered by this phone system.',
    });
  });

  it.each([
    ['a foreign window', () => ({ sender: t.foreign.webContents })],
    [
      'a foreign window claiming our URL',
      () => ({ sender: t.foreign.webContents, frameUrl: 'app://screenpop/popup.html' }),
    ],
    [
      'our popup navigated elsewhere',
      () => ({ sender: t.popup.webContents, frameUrl: 'https://evil.example/' }),
    ],
    ['the settings page (no right to call)', () => ({ sender: t.settings.webContents })],
    ['the History page using a popup channel', () => ({ sender: t.history.webContents })],
  ])('ignores %s: nothing is dialled', async (_name, from) => {
    expect(await ipcMain.invoke('popup:call-back', from(), 'card-1')).toBeUndefined();
    expect(await ipcMain.invoke('popup:hangup', from(), 'card-1')).toBeUndefined();
    expect(pbx.done).toEqual([]);
  });

  it.each([
    ['popup:call-back', [42]],
    ['popup:call-back', ['x'.repeat(257)]],
    ['popup:call-back', ['card-1', '+19005550123']],
    ['popup:call-back', []],
    ['popup:transfer', ['call-9']],
    ['popup:transfer', ['call-9', 204]],
    ['popup:transfer', ['call-9', '1'.repeat(65), 'blind']],
    ['popup:transfer', ['call-9', '204']],
    ['popup:transfer', ['call-9', '204', 'threeway']],
    ['popup:complete-transfer', []],
    ['popup:cancel-transfer', [{ callId: 'call-9' }]],
    ['popup:colleagues', ['x'.repeat(65)]],
    ['popup:hangup', [{ callId: 'call-9' }]],
    ['calls:offered', ['dial']],
  ] as const)('refuses %s with bad arguments %j before the phone system', async (ch, args) => {
    await expect(
      ipcMain.invoke(ch, { sender: t.popup.webContents }, ...(args as readonly unknown[])),
    ).rejects.toThrow('Invalid arguments');
    expect(pbx.done).toEqual([]);
  });

  it('refuses a transfer target that is not a number, in words', async () => {
    const r = await ipcMain.invoke(
      'popup:transfer',
      { sender: t.popup.webContents },
      'call-9',
      'javascript:alert(1)',
      'blind',
    );
    expect(r).toMatchObject({ ok: false, refusal: 'not-a-number' });
    expect(pbx.done).toEqual([]);
  });

  it('a card that is gone has no number to call', async () => {
    const r = await ipcMain.invoke('popup:call-back', { sender: t.popup.webContents }, 'gone');
    expect(r).toMatchObject({ ok: false, refusal: 'unknown-call' });
  });

  it('an action not offered is refused without asking the phone system', async () => {
    const r = await ipcMain.invoke('popup:answer', { sender: t.popup.webContents }, 'call-9');
    expect(r).toMatchObject({ ok: false, refusal: 'not-offered' });
    expect(pbx.done).toEqual([]);
  });
});

describe('the dial box over IPC (dial:call)', () => {
  let pbx: ReturnType<typeof yeastarLike>;
  let t: ReturnType<typeof setup>;
  beforeEach(() => {
    pbx = yeastarLike(['dial']);
    t = setup(pbx.control);
  });

  it('dials what the user typed as their phone would dial it', async () => {
    const r = await ipcMain.invoke('dial:call', { sender: t.dial.webContents }, '020 7946 0000');
    expect(r).toEqual({ ok: true });
    expect(pbx.done).toEqual(['dial 02079460000']);
  });

  it.each([
    ['a foreign window', () => ({ sender: t.foreign.webContents })],
    [
      'a foreign window claiming the dial page',
      () => ({ sender: t.foreign.webContents, frameUrl: 'app://screenpop/dial.html' }),
    ],
    [
      'the dial box navigated elsewhere',
      () => ({ sender: t.dial.webContents, frameUrl: 'https://evil.example/dial.html' }),
    ],
    ['the popup', () => ({ sender: t.popup.webContents })],
    ['History', () => ({ sender: t.history.webContents })],
    ['Settings', () => ({ sender: t.settings.webContents })],
  ])('ignores %s: nothing is dialled', async (_name, from) => {
    expect(await ipcMain.invoke('dial:call', from(), '+14155550123')).toBeUndefined();
    expect(pbx.done).toEqual([]);
  });

  it.each([
    [[]],
    [[14155550123]],
    [['1'.repeat(65)]],
    [['+14155550123', '+14155550124']],
    [[{ number: '+14155550123' }]],
    [[null]],
  ] as const)('refuses bad arguments %j before the phone system', async (args) => {
    await expect(
      ipcMain.invoke('dial:call', { sender: t.dial.webContents }, ...(args as readonly unknown[])),
    ).rejects.toThrow('Invalid arguments');
    expect(pbx.done).toEqual([]);
  });

  it('takes 64 characters; says an invalid number in words', async () => {
    const from = { sender: t.dial.webContents };
    const long = await ipcMain.invoke('dial:call', from, `+1415555${'0'.repeat(56)}`);
    expect(long).toMatchObject({ ok: false });
    const bad = await ipcMain.invoke('dial:call', from, 'javascript:alert(1)');
    expect(bad).toMatchObject({ ok: false, refusal: 'not-a-number' });
    expect((bad as { message: string }).message.length).toBeGreaterThan(0);
    expect(pbx.done).toEqual([]);
  });

  it('the dial page may not read the settings', async () => {
    expect(await ipcMain.invoke('settings:get', { sender: t.dial.webContents })).toBeUndefined();
  });
});

describe('a phone system that offers no calls', () => {
  it('offers nothing and says so in the user’s language', async () => {
    const t = setup(notOfferedCallControl(), 'ar');
    expect(await ipcMain.invoke('calls:offered', { sender: t.popup.webContents })).toEqual([]);
    const r = await ipcMain.invoke('popup:call-back', { sender: t.popup.webContents }, 'card-1');
    expect(r).toMatchObject({ ok: false, refusal: 'not-offered' });
    expect((r as { message: string }).message).toContain('Screenpop');
    expect((r as { message: string }).message).toMatch(/[\u0600-\u06ff]/);
    const d = await ipcMain.invoke('dial:call', { sender: t.dial.webContents }, '+14155550123');
    expect(d).toMatchObject({ ok: false, refusal: 'not-offered' });
    expect((d as { message: string }).message).toMatch(/[\u0600-\u06ff]/);
  });
});

describe('remote answer over IPC (calls:remote-answer)', () => {
  it('says per ringing call whether Answer shows, and why not in the user’s language; popup only', async () => {
    const pbx = yeastarLike(['dial', 'answer', 'decline']);
    pbx.control.remoteAnswer = (id) =>
      id === 'sure'
        ? { offered: true }
        : { offered: false, words: [phrase('status.call.uacsta.two-calls')] };
    const t = setup(pbx.control, 'ar');
    const from = { sender: t.popup.webContents };
    expect(await ipcMain.invoke('calls:remote-answer', from, 'sure')).toEqual({ offered: true });
    const r = (await ipcMain.invoke('calls:remote-answer', from, 'unsure')) as {
      offered: boolean;
      why: string;
    };
    expect(r.offered).toBe(false);
    expect(r.why).toContain('Screenpop');
    expect(r.why).not.toMatch(/more than one call/);
    // Another page has no right to ask: ignored.
    expect(
      await ipcMain.invoke('calls:remote-answer', { sender: t.history.webContents }, 'sure'),
    ).toBeUndefined();
  });

  it('not offered at all where the phone system has no remote answer', async () => {
    const t = setup(yeastarLike(['dial']).control);
    expect(
      await ipcMain.invoke('calls:remote-answer', { sender: t.popup.webContents }, 'x'),
    ).toEqual({ offered: false });
  });
});

describe('attended transfers under way over IPC (calls:consultations)', () => {
  function withTable(locale: 'en' | 'ar' = 'en') {
    const pbx = yeastarLike(['dial', 'transfer', 'hangup']);
    const clock = new FakeClock();
    const table = new Consultations({ clock, logger: memoryLogger() });
    const t = setup(pbx.control, locale, {
      consultations: table,
      nameOf: (ext) => (ext === '204' ? 'Bob Stone' : null),
    });
    return { pbx, clock, table, t, from: { sender: t.popup.webContents } };
  }

  it('the popup (and the same popup loaded again) is given main’s list until Complete', async () => {
    const { pbx, clock, t, from } = withTable();
    expect(await ipcMain.invoke('calls:consultations', from)).toEqual([]);
    await ipcMain.invoke('popup:transfer', from, 'call-9', '204', 'attended');
    const held = [{ callId: 'call-9', target: '204', targetName: 'Bob Stone', since: clock.now() }];
    expect(await ipcMain.invoke('calls:consultations', from)).toEqual(held);
    // A reload is the same page asking again: the answer is main's, not the page's memory.
    void t.popup.loadURL(origin.pageUrl('popup'));
    expect(await ipcMain.invoke('calls:consultations', from)).toEqual(held);
    expect(await ipcMain.invoke('popup:complete-transfer', from, 'call-9')).toEqual({ ok: true });
    expect(await ipcMain.invoke('calls:consultations', from)).toEqual([]);
    expect(pbx.done).toEqual(['transfer call-9 204 attended', 'complete call-9']);
  });

  it('stale: the PBX refuses Complete in the user’s words, the list unchanged; no-such-call clears it', async () => {
    const { pbx, table, from } = withTable('ar');
    await ipcMain.invoke('popup:transfer', from, 'call-9', '204', 'attended');
    pbx.control.completeTransfer = async () =>
      callRefusalOf(new ServiceError({ kind: 'bad-request', errcode: 40002, message: 'x' }));
    const r = (await ipcMain.invoke('popup:complete-transfer', from, 'call-9')) as {
      ok: false;
      refusal: string;
      message: string;
    };
    expect(r).toMatchObject({ ok: false, refusal: 'refused' });
    expect(r.message).toMatch(/[\u0600-\u06ff]/);
    expect(table.list()).toHaveLength(1);
    pbx.control.hangup = async () => ({
      ok: false,
      refusal: 'no-such-call',
      words: [],
      message: 'gone',
    });
    await ipcMain.invoke('popup:hangup', from, 'call-9');
    expect(await ipcMain.invoke('calls:consultations', from)).toEqual([]);
  });

  it.each([
    ['a foreign window', (t: ReturnType<typeof setup>) => ({ sender: t.foreign.webContents })],
    [
      'a foreign window claiming the popup’s URL',
      (t: ReturnType<typeof setup>) => ({
        sender: t.foreign.webContents,
        frameUrl: 'app://screenpop/popup.html',
      }),
    ],
    [
      'our popup navigated elsewhere',
      (t: ReturnType<typeof setup>) => ({
        sender: t.popup.webContents,
        frameUrl: 'https://evil.example/',
      }),
    ],
    ['Settings', (t: ReturnType<typeof setup>) => ({ sender: t.settings.webContents })],
    ['History', (t: ReturnType<typeof setup>) => ({ sender: t.history.webContents })],
    ['the dial box', (t: ReturnType<typeof setup>) => ({ sender: t.dial.webContents })],
  ])('ignores %s (no answer, logged)', async (_name, sender) => {
    const { t, table } = withTable();
    table.begin('call-9', '204', 'Bob Stone');
    expect(await ipcMain.invoke('calls:consultations', sender(t))).toBeUndefined();
    expect(
      t.logger.records.some(
        (r) =>
          r.msg === 'IPC from an untrusted sender ignored' && r.channel === 'calls:consultations',
      ),
    ).toBe(true);
  });

  it.each([[['call-9']], [[{}]], [[null]], [['call-9', 'call-8']]] as const)(
    'refuses arguments %j: it takes none',
    async (args) => {
      const { from, table } = withTable();
      table.begin('call-9', '204', null);
      await expect(
        ipcMain.invoke('calls:consultations', from, ...(args as readonly unknown[])),
      ).rejects.toThrow('Invalid arguments for calls:consultations');
    },
  );
});
