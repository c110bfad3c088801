/**
 * The composition root on the electron mock, with the simulator as the service and an in-memory
 * keytar (the OS keychain is the far side of a wire here): start-up security, onboarding, saving
 * settings through IPC, a ring popping a notification and the inactive popup, Do Not Disturb
 * suppressing the notification while history still records the call, and a clean quit.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));
vi.mock('keytar', () => import('../support/keytar-mock.ts'));

import {
  INVOKE_CHANNELS,
  type HistoryEntry,
  type SettingsView,
  type StatusView,
} from '../../src-main/ipc/contract.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import {
  app,
  BrowserWindow,
  clipboard,
  dialog,
  ipcMain,
  Menu,
  Notification,
  powerMonitor,
  protocol,
  resetElectronMock,
  session,
  Tray,
} from '../support/electron-mock.ts';
import { keychain } from '../support/keytar-mock.ts';
import { CLAIM_DEVICE_PATTERN } from '../../src-shared/relay/relay-protocol.ts';

let dir: string;
let sim: Simulator;
/** The process handlers main.ts adds (called directly: emitting on `process` would reach Vitest's own). */
let mainHandlers: {
  exception?: NodeJS.UncaughtExceptionListener;
  rejection?: NodeJS.UnhandledRejectionListener;
} = {};

const trayIcon = () => (Tray.instances[0]?.image as { path?: string } | undefined)?.path ?? '';
const windowAt = (url: string) =>
  BrowserWindow.instances.find((w) => w.loadedUrl === url && !w.destroyed);

beforeAll(async () => {
  resetElectronMock();
  dir = await mkdtemp(join(tmpdir(), 'sp-main-'));
  app.appPath = '/opt/screenpop/resources/app.asar';
  app.paths.userData = dir;
  sim = await startSimulator({ extensions: 5 });
  const before = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  await import('../../src-main/electron/main.ts');
  app.ready();
  await vi.waitFor(() => expect(windowAt('app://screenpop/settings.html')).toBeDefined(), {
    timeout: 10_000,
  });
  mainHandlers = {
    exception: process.listeners('uncaughtException').find((l) => !before.exception.includes(l)),
    rejection: process.listeners('unhandledRejection').find((l) => !before.rejection.includes(l)),
  };
});

afterAll(() => {
  if (mainHandlers.exception) process.off('uncaughtException', mainHandlers.exception);
  if (mainHandlers.rejection) process.off('unhandledRejection', mainHandlers.rejection);
});

afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('main.ts', () => {
  it('secures the app before any page loads', () => {
    // An unpackaged run is its own app to Windows (windows-toasts.ts).
    expect(app.appUserModelId).toBe('com.screenpop.desktop.dev');
    // Electron's default menu (Reload, Toggle Developer Tools, Help links) is gone (Linux here).
    expect(Menu.application).toBeNull();
    expect(protocol.privileged).toEqual([
      { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
    ]);
    expect(protocol.handlers.has('app')).toBe(true);
    expect(session.defaultSession.permissionRequestHandler).not.toBeNull();
    expect(session.defaultSession.headersListener).not.toBeNull();
    expect([...ipcMain.handlers.keys()].sort()).toEqual([...INVOKE_CHANNELS].sort());
    for (const w of BrowserWindow.instances) {
      expect(w.options.webPreferences).toMatchObject({
        sandbox: true,
        contextIsolation: true,
        nodeIntegration: false,
        webSecurity: true,
        preload: '/opt/screenpop/resources/app.asar/dist/preload/preload.cjs',
      });
    }
  });

  it('creates the popup hidden at start-up and opens onboarding when there are no settings', async () => {
    const popup = windowAt('app://screenpop/popup.html');
    expect(popup?.visible).toBe(false);
    expect(popup?.calls).toEqual([]);
    const settings = windowAt('app://screenpop/settings.html')!;
    await vi.waitFor(() => expect(settings.visible).toBe(true));
    const view = (await ipcMain.invoke('settings:get', {
      sender: settings.webContents,
    })) as SettingsView;
    expect(view.needsOnboarding).toBe(true);
    expect(trayIcon()).toContain('needs-attention');
  });

  it('keeps this computer’s id for call claims in userData from the first start (claim-device.ts)', async () => {
    const kept = JSON.parse(await readFile(join(dir, 'claim-device.json'), 'utf8')) as unknown;
    expect(kept).toEqual({ v: 1, device: expect.stringMatching(CLAIM_DEVICE_PATTERN) });
  });

  it('ignores a page that is not ours, and our popup asking for a settings channel', async () => {
    const popup = windowAt('app://screenpop/popup.html')!;
    expect(
      await ipcMain.invoke(
        'settings:save',
        { sender: popup.webContents },
        { settings: { doNotDisturb: true } },
      ),
    ).toBeUndefined();
    const stranger = new BrowserWindow();
    await stranger.loadURL('https://evil.example/');
    expect(await ipcMain.invoke('status:get', { sender: stranger.webContents })).toBeUndefined();
    const settings = windowAt('app://screenpop/settings.html')!;
    expect(
      await ipcMain.invoke('status:get', {
        sender: settings.webContents,
        frameUrl: 'https://evil.example/',
      }),
    ).toBeUndefined();
  });

  it('saves settings (secret to the keychain only), connects, and pops a ring with the directory name', async () => {
    const settings = windowAt('app://screenpop/settings.html')!;
    const saved = await ipcMain.invoke(
      'settings:save',
      { sender: settings.webContents },
      {
        settings: {
          baseUrl: sim.baseUrl,
          apiKey: sim.apiKey.key,
          extensions: ['101'],
          popupLingerSec: 1,
        },
        secret: sim.apiKey.secret,
      },
    );
    expect(saved).toMatchObject({ ok: true, view: { needsOnboarding: false, hasSecret: true } });
    expect([...keychain.values()]).toEqual([sim.apiKey.secret]);
    expect(await readFile(join(dir, 'settings.json'), 'utf8')).not.toContain(sim.apiKey.secret);
    await vi.waitFor(() => expect(trayIcon()).toContain('/connected'), { timeout: 10_000 });
    const statuses = settings.webContents.sent
      .filter((s) => s.channel === 'status:changed')
      .map((s) => (s.args[0] as StatusView).state);
    expect(statuses).toContain('connected');

    const caller = sim.extensions[1]!;
    const callId = sim.ring({ from: caller.number, to: '101' });
    await vi.waitFor(() => expect(Notification.instances).toHaveLength(1), { timeout: 5000 });
    const popup = windowAt('app://screenpop/popup.html')!;
    // The name comes from the directory (loaded in the background; a card fills it in if it rang first).
    await vi.waitFor(
      () =>
        expect(popup.webContents.lastSent('popup:calls')?.[0]).toMatchObject([
          { callId, callerName: caller.caller_id_name },
        ]),
      { timeout: 5000 },
    );
    expect(popup.visible).toBe(true);
    expect(popup.calls).not.toContain('show');
    expect(popup.calls).not.toContain('focus');
    expect(await ipcMain.invoke('popup:ready', { sender: popup.webContents })).toMatchObject([
      { callId },
    ]);
    sim.setCallState(callId, 'ended');
    await vi.waitFor(() => expect(popup.visible).toBe(false), { timeout: 5000 });
  });

  it('a missed-call notification’s click opens History with that call selected (taken by a page still loading, pushed to an open one)', async () => {
    /** The missed-call notification shown after notification number `after`. */
    const missedNotification = async (after: number) => {
      const find = () =>
        Notification.instances
          .slice(after)
          .find((n) => n.shown && /^Missed call/.test(String(n.options.title)));
      await vi.waitFor(() => expect(find()).toBeDefined(), { timeout: 5000 });
      return find()!;
    };
    const first = sim.ring({ from: '+14155550123', to: '101' });
    await vi.waitFor(() => expect(windowAt('app://screenpop/popup.html')!.visible).toBe(true), {
      timeout: 5000,
    });
    let shown = Notification.instances.length;
    sim.setCallState(first, 'ended');
    (await missedNotification(shown)).click();
    const history = windowAt('app://screenpop/history.html')!;
    expect(history).toBeDefined();
    // Its page was still loading when the click came: it asks, and gets the call once.
    await vi.waitFor(() => expect(history.visible).toBe(true));
    expect(await ipcMain.invoke('history:selection', { sender: history.webContents })).toBe(first);
    expect(await ipcMain.invoke('history:selection', { sender: history.webContents })).toBeNull();
    const list = (await ipcMain.invoke('history:list', {
      sender: history.webContents,
    })) as HistoryEntry[];
    expect(list.map((e) => e.callId)).toContain(first);
    // Only History's page may ask.
    const popup = windowAt('app://screenpop/popup.html')!;
    expect(
      await ipcMain.invoke('history:selection', { sender: popup.webContents }),
    ).toBeUndefined();

    // History is open: the next missed call's click is pushed to its page.
    const second = sim.ring({ from: '+442079460958', to: '101' });
    await vi.waitFor(() => expect(popup.visible).toBe(true), { timeout: 5000 });
    shown = Notification.instances.length;
    sim.setCallState(second, 'ended');
    (await missedNotification(shown)).click();
    expect(history.webContents.lastSent('history:select')).toEqual([second]);
    await ipcMain.invoke('window:close', { sender: history.webContents });
    await vi.waitFor(() => expect(popup.visible).toBe(false), { timeout: 5000 });
  });

  it('a missed call whose caller leaves a voicemail: the voicemail’s notification replaces the missed call’s, and its click selects the voicemail', async () => {
    const popup = windowAt('app://screenpop/popup.html')!;
    const callId = sim.ring({ from: '+13125550175', to: '101' });
    await vi.waitFor(() => expect(popup.visible).toBe(true), { timeout: 5000 });
    const before = Notification.instances.length;
    sim.setCallState(callId, 'ended');
    const titled = (re: RegExp) =>
      Notification.instances.slice(before).filter((n) => re.test(String(n.options.title)));
    await vi.waitFor(() => expect(titled(/^Missed call/)).toHaveLength(1), { timeout: 5000 });
    expect(titled(/^Missed call/)[0]!.closed).toBe(false);
    sim.voicemail({
      extension: '101',
      from: '+13125550175',
      durationSec: 30,
      voicemailId: 'vm-main',
    });
    await vi.waitFor(() => expect(titled(/^Voicemail/)).toHaveLength(1), { timeout: 5000 });
    expect(titled(/^Missed call/)[0]!.closed).toBe(true);
    titled(/^Voicemail/)[0]!.click();
    const history = windowAt('app://screenpop/history.html')!;
    await vi.waitFor(() => expect(history.visible).toBe(true));
    expect(await ipcMain.invoke('history:selection', { sender: history.webContents })).toBe(
      'voicemail:vm-main',
    );
    await ipcMain.invoke('window:close', { sender: history.webContents });
    await vi.waitFor(() => expect(popup.visible).toBe(false), { timeout: 5000 });
  });

  it('the user closes the popup (Alt+F4 / Cmd+W) while a call rings: it hides, and the next ring shows it', async () => {
    const popup = windowAt('app://screenpop/popup.html')!;
    const first = sim.ring({ from: '+14155550123', to: '101' });
    await vi.waitFor(() => expect(popup.visible).toBe(true), { timeout: 5000 });
    expect(popup.close()).toBe(false);
    expect(popup.destroyed).toBe(false);
    expect(popup.visible).toBe(false);
    sim.setCallState(first, 'ended');
    const second = sim.ring({ from: '+442079460958', to: '101' });
    await vi.waitFor(
      () => {
        expect(popup.visible).toBe(true);
        expect(popup.webContents.lastSent('popup:calls')?.[0]).toMatchObject([{ callId: second }]);
      },
      { timeout: 5000 },
    );
    const settings = windowAt('app://screenpop/settings.html')!;
    const problems = (settings.webContents.lastSent('status:changed')?.[0] as StatusView)
      .desktopProblems;
    expect(problems?.find((p) => p.id === 'popup')).toBeUndefined();
    sim.setCallState(second, 'ended');
    await vi.waitFor(() => expect(popup.visible).toBe(false), { timeout: 5000 });
  });

  it('under Do Not Disturb: no notification, no popup, but the call is in the history', async () => {
    const notifications = Notification.instances.length;
    Tray.instances[0]!.item('dnd')!.click!();
    await vi.waitFor(() => expect(Tray.instances[0]!.item('dnd')?.checked).toBe(true));
    const callId = sim.ring({ from: '+14155550123', to: '101' });
    const settings = windowAt('app://screenpop/settings.html')!;
    await vi.waitFor(
      async () => {
        const list = (await ipcMain.invoke('history:list', {
          sender: settings.webContents,
        })) as HistoryEntry[];
        expect(list.map((e) => e.callId)).toContain(callId);
      },
      { timeout: 5000 },
    );
    expect(Notification.instances).toHaveLength(notifications);
    expect(windowAt('app://screenpop/popup.html')!.visible).toBe(false);
    powerMonitor.emit('resume'); // a wake must not disturb anything
    const pushed = settings.webContents.sent.filter((m) => m.channel === 'history:changed');
    expect((pushed.at(-1)?.args[0] as HistoryEntry[]).map((e) => e.callId)).toContain(callId);
  });

  it('an unexpected error does not end the app: the status says so and the connection is rebuilt', async () => {
    expect(mainHandlers.exception).toBeTypeOf('function');
    expect(mainHandlers.rejection).toBeTypeOf('function');
    const connectionsBefore = sim.stats().wsConnections;
    mainHandlers.exception!(
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      'uncaughtException',
    );
    mainHandlers.rejection!(new Error('a rejection nobody handled'), Promise.resolve());
    const settings = windowAt('app://screenpop/settings.html')!;
    await vi.waitFor(() =>
      expect((settings.webContents.lastSent('status:changed')?.[0] as StatusView).fault).toEqual({
        count: 2,
        at: expect.any(Number),
      }),
    );
    expect(Tray.instances[0]?.tooltip).toContain('Recovered from 2 internal errors');
    await vi.waitFor(() => expect(sim.stats().wsConnections).toBeGreaterThan(connectionsBefore), {
      timeout: 10_000,
    });
    await vi.waitFor(() => expect(trayIcon()).toContain('/connected'), { timeout: 10_000 });
    const log = await readFile(join(dir, 'logs', 'screenpop.log'), 'utf8');
    expect(log).toContain('unexpected error caught by the last resort');
  });

  it('sizes the popup to its content and closes windows on request', async () => {
    const popup = windowAt('app://screenpop/popup.html')!;
    await ipcMain.invoke('popup:content-size', { sender: popup.webContents }, 300);
    await expect(
      ipcMain.invoke('popup:content-size', { sender: popup.webContents }, -1),
    ).rejects.toThrow('Invalid arguments');
    const history = await (async () => {
      Tray.instances[0]!.item('history')!.click!();
      return windowAt('app://screenpop/history.html')!;
    })();
    expect(history).toBeDefined();
    await ipcMain.invoke('history:mark-seen', { sender: history.webContents });
    await ipcMain.invoke('window:close', { sender: history.webContents });
    expect(history.destroyed).toBe(true);
    expect(windowAt('app://screenpop/settings.html')).toBeDefined();
  });

  it('exports the history through a save dialog modal to the history window, and picks a contacts file through an open dialog', async () => {
    Tray.instances[0]!.item('history')!.click!();
    const history = windowAt('app://screenpop/history.html')!;
    const list = (await ipcMain.invoke('history:list', {
      sender: history.webContents,
    })) as HistoryEntry[];
    expect(list.length).toBeGreaterThanOrEqual(2);
    const ids = list.map((e) => e.callId);

    // Cancelled: nothing written, the page hears "cancelled".
    expect(
      await ipcMain.invoke('history:export-csv', { sender: history.webContents }, ids),
    ).toEqual({ status: 'cancelled' });
    expect(dialog.calls.at(-1)).toMatchObject({ kind: 'save', parent: history });
    expect(String(dialog.calls.at(-1)?.options.defaultPath)).toMatch(
      /Documents[\\/]screenpop-calls-\d{4}-\d{2}-\d{2}\.csv$/,
    );

    // Saved: the page learns the file's name and the count, never the folder.
    const target = join(dir, 'exports', 'my calls.csv');
    dialog.answer = target;
    expect(
      await ipcMain.invoke('history:export-csv', { sender: history.webContents }, ids),
    ).toEqual({ status: 'saved', fileName: 'my calls.csv', count: ids.length });
    const csv = await readFile(target, 'utf8');
    expect(csv.split('\r\n').filter(Boolean)).toHaveLength(ids.length + 1);

    // A folder that cannot be written: a plain message, no path, no crash.
    dialog.answer = join(dir, 'settings.json', 'nested.csv');
    expect(
      await ipcMain.invoke('history:export-csv', { sender: history.webContents }, ids),
    ).toMatchObject({ status: 'failed', message: expect.not.stringContaining(dir) });

    // Copy and CRM act on main's own entry.
    await ipcMain.invoke('history:copy-number', { sender: history.webContents }, ids[0]);
    expect(clipboard.text).toBe(list[0]?.from);

    // Only the history page may export; the popup is ignored and no dialog opens.
    const popup = windowAt('app://screenpop/popup.html')!;
    const dialogs = dialog.calls.length;
    expect(
      await ipcMain.invoke('history:export-csv', { sender: popup.webContents }, ids),
    ).toBeUndefined();
    expect(
      await ipcMain.invoke('settings:choose-contacts-file', { sender: history.webContents }),
    ).toBeUndefined();
    expect(dialog.calls.length).toBe(dialogs);
    await expect(
      ipcMain.invoke('history:export-csv', { sender: history.webContents }, 'all'),
    ).rejects.toThrow('Invalid arguments');

    // The contacts picker: the settings page gets what the user picked, and what is in it.
    const settings = windowAt('app://screenpop/settings.html')!;
    const contacts = join(dir, 'contacts.csv');
    await writeFile(contacts, 'Name,Phone\nAda Lovelace,+14155550123\n');
    dialog.answer = contacts;
    expect(
      await ipcMain.invoke('settings:choose-contacts-file', { sender: settings.webContents }),
    ).toEqual({ status: 'picked', path: contacts, contacts: 1 });
    expect(dialog.calls.at(-1)).toMatchObject({ kind: 'open', parent: settings });
    expect(
      await ipcMain.invoke(
        'settings:save',
        { sender: settings.webContents },
        { settings: { contactsFile: contacts } },
      ),
    ).toMatchObject({ ok: true });
    expect(
      await ipcMain.invoke(
        'settings:save',
        { sender: settings.webContents },
        { settings: { contactsFile: join(dir, 'settings.json') } },
      ),
    ).toMatchObject({ ok: false, field: 'contactsFile' });
  });

  it('speaks the language chosen in Settings: tray, windows and popup at once, and back to the OS', async () => {
    const settings = windowAt('app://screenpop/settings.html')!;
    const popup = windowAt('app://screenpop/popup.html')!;
    const saved = (await ipcMain.invoke(
      'settings:save',
      { sender: settings.webContents },
      { settings: { language: 'de' } },
    )) as { ok: boolean };
    expect(saved.ok).toBe(true);
    await vi.waitFor(() =>
      expect(Tray.instances[0]!.item('settings')?.label).toBe('Einstellungen…'),
    );
    expect(settings.webContents.lastSent('i18n:changed')).toEqual([{ locale: 'de' }]);
    expect(popup.webContents.lastSent('i18n:changed')).toEqual([{ locale: 'de' }]);
    expect(await ipcMain.invoke('i18n:get', { sender: popup.webContents })).toEqual({
      locale: 'de',
    });
    // 'system' follows the OS's languages (the mock's: en-US).
    await ipcMain.invoke(
      'settings:save',
      { sender: settings.webContents },
      { settings: { language: 'system' } },
    );
    await vi.waitFor(() => expect(Tray.instances[0]!.item('settings')?.label).toBe('Settings…'));
    expect(popup.webContents.lastSent('i18n:changed')).toEqual([{ locale: 'en' }]);
  });

  it('quits cleanly, stopping the connection', async () => {
    app.quit();
    await vi.waitFor(() => expect(app.exitCode).toBe(0), { timeout: 10_000 });
    expect(Tray.instances[0]?.destroyed).toBe(true);
    expect(ipcMain.handlers.size).toBe(0);
    await vi.waitFor(() => expect(sim.stats().wsOpen).toBe(0), { timeout: 5000 });
  });
});
