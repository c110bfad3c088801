/**
 * The generic connector's call-log signing secret (issue 39) through the composition root on the
 * electron mock, with an in-memory keytar (the OS keychain is the far side of a wire here): saved
 * from Settings it goes to the keychain under `crm-log@<host>` and nowhere else (not the settings
 * file, not any file of the app's folder, not the view Settings gets, not a diagnostics archive);
 * Settings learns only that one is stored, and an address that is not https is refused at its
 * field with words.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));
vi.mock('keytar', () => import('../support/keytar-mock.ts'));

import type { SettingsView } from '../../src-main/ipc/contract.ts';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  resetElectronMock,
  Tray,
} from '../support/electron-mock.ts';
import { keychain } from '../support/keytar-mock.ts';

const SECRET = 'whsec-call-log-7f3a9c1e5b';
const LOG_URL = 'https://calls.acme.example:8443/screenpop/calls';
const GENERIC = {
  provider: 'generic',
  urlTemplate: 'https://crm.acme.example/api/callers?phone={number}',
  auth: 'none',
  nameField: 'name',
  companyField: 'company',
  recordUrlField: 'url',
  timeoutSec: 3,
};

let dir: string;
let before: {
  exception: NodeJS.UncaughtExceptionListener[];
  rejection: NodeJS.UnhandledRejectionListener[];
};

const settingsWindow = () =>
  BrowserWindow.instances.find(
    (w) => w.loadedUrl === 'app://screenpop/settings.html' && !w.destroyed,
  )!;
const invoke = (channel: string, ...args: unknown[]) =>
  ipcMain.invoke(channel, { sender: settingsWindow().webContents }, ...args);

/** Every file under `root`, with its bytes. */
async function filesUnder(root: string): Promise<Array<{ path: string; bytes: Buffer }>> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push({ path, bytes: await readFile(path) });
  }
  return out;
}

beforeAll(async () => {
  resetElectronMock();
  dir = await mkdtemp(join(tmpdir(), 'sp-call-log-secret-'));
  app.appPath = '/opt/screenpop/resources/app.asar';
  app.paths.userData = dir;
  before = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  await import('../../src-main/electron/main.ts');
  app.ready();
  await vi.waitFor(() => expect(settingsWindow()).toBeDefined(), { timeout: 20_000 });
});

afterAll(async () => {
  app.quit();
  for (const l of process.listeners('uncaughtException'))
    if (!before.exception.includes(l)) process.off('uncaughtException', l);
  for (const l of process.listeners('unhandledRejection'))
    if (!before.rejection.includes(l)) process.off('unhandledRejection', l);
  await rm(dir, { recursive: true, force: true });
});

describe("the call log's signing secret", () => {
  it('an http address to another computer is refused at its field, with words; nothing is stored', async () => {
    const refused = (await invoke('settings:save', {
      settings: { crmLookup: { ...GENERIC, logUrl: 'http://calls.acme.example/screenpop' } },
      crmLogSecret: SECRET,
    })) as { ok: boolean; field?: string; message?: string };
    expect(refused).toMatchObject({ ok: false, field: 'crmLookup.logUrl' });
    expect(refused.message).toMatch(/^The call log address must start with https:\/\//);
    expect([...keychain.keys()].filter((k) => k.includes('crm-log@'))).toEqual([]);
  });

  it('goes to the keychain only; Settings learns that one is stored, and it stays through a later save', async () => {
    const saved = (await invoke('settings:save', {
      settings: { crmLookup: { ...GENERIC, logUrl: LOG_URL } },
      crmLogSecret: `  ${SECRET} `,
    })) as { ok: boolean; view?: SettingsView };
    expect(saved).toMatchObject({ ok: true, view: { hasCrmLogSecret: true } });
    expect(keychain.get('Screenpop/crm-log@calls.acme.example:8443')).toBe(SECRET);
    const settingsFile = await readFile(join(dir, 'settings.json'), 'utf8');
    expect(JSON.parse(settingsFile).crmLookup.logUrl).toBe(LOG_URL);
    expect(settingsFile).not.toContain(SECRET);

    // A save without a new secret keeps the stored one; the view never carries it.
    const again = (await invoke('settings:save', {
      settings: { doNotDisturb: true },
    })) as { ok: boolean; view?: SettingsView };
    expect(again).toMatchObject({ ok: true, view: { hasCrmLogSecret: true } });
    const view = (await invoke('settings:get')) as SettingsView;
    expect(view.hasCrmLogSecret).toBe(true);
    expect(JSON.stringify(view)).not.toContain(SECRET);
    expect(keychain.get('Screenpop/crm-log@calls.acme.example:8443')).toBe(SECRET);

    // Not in any file of the app's folder (settings, its backup, logs, the call-log queue).
    for (const file of await filesUnder(dir))
      expect(file.bytes.includes(SECRET), file.path).toBe(false);
  });

  it('is not in a diagnostics archive, which does carry the address', async () => {
    const archive = join(dir, 'diagnostics.tar.gz');
    dialog.answer = archive;
    Tray.instances[0]!.item('diagnostics')!.click!();
    const tar = await vi.waitFor(async () => gunzipSync(await readFile(archive)), {
      timeout: 10_000,
    });
    expect(tar.includes('calls.acme.example')).toBe(true);
    expect(tar.includes(SECRET)).toBe(false);
  });
});
