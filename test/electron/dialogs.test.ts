/**
 * The native file dialogs behind settings:choose-contacts-file and history:export-csv: modal to
 * the window that asked, only what the user picked comes back, one dialog per purpose at a time.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { BrowserWindow as BrowserWindowType, Dialog, WebContents } from 'electron';
import { NativeDialogs } from '../../src-main/electron/dialogs.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { BrowserWindow, dialog, resetElectronMock } from '../support/electron-mock.ts';

function setup() {
  resetElectronMock();
  const win = new BrowserWindow();
  const logger = memoryLogger();
  const dialogs = new NativeDialogs({
    dialog: dialog as unknown as Dialog,
    windowOf: (contents) =>
      BrowserWindow.fromWebContents(contents) as unknown as BrowserWindowType | null,
    documentsFolder: () => '/home/ada/Documents',
    logger,
  });
  const sender = win.webContents as unknown as WebContents;
  return { win, dialogs, sender, logger };
}

describe('NativeDialogs', () => {
  let t: ReturnType<typeof setup>;
  beforeEach(() => {
    t = setup();
  });

  it('opens the contacts picker modal to the asking window, for CSV and vCard files', async () => {
    expect(await t.dialogs.chooseContactsFile(t.sender)).toBeNull();
    dialog.answer = '/home/ada/contacts.vcf';
    expect(await t.dialogs.chooseContactsFile(t.sender)).toBe('/home/ada/contacts.vcf');
    expect(dialog.calls).toHaveLength(2);
    expect(dialog.calls[1]?.parent).toBe(t.win);
    expect(dialog.calls[1]?.options).toMatchObject({
      properties: ['openFile'],
      filters: [{ extensions: ['csv', 'vcf', 'vcard', 'txt'] }, { extensions: ['*'] }],
    });
  });

  it('proposes the export in Documents under the given name and asks before overwriting', async () => {
    dialog.answer = '/home/ada/Desktop/calls.csv';
    expect(await t.dialogs.chooseExportPath(t.sender, 'screenpop-calls-2026-11-22.csv')).toBe(
      '/home/ada/Desktop/calls.csv',
    );
    expect(dialog.calls[0]).toMatchObject({
      kind: 'save',
      parent: t.win,
      options: {
        defaultPath: '/home/ada/Documents/screenpop-calls-2026-11-22.csv',
        properties: expect.arrayContaining(['showOverwriteConfirmation']),
      },
    });
  });

  it('answers a second request "cancelled" while the first dialog is open, and logs it', async () => {
    dialog.pending = true;
    dialog.answer = '/home/ada/calls.csv';
    const first = t.dialogs.chooseExportPath(t.sender, 'a.csv');
    expect(await t.dialogs.chooseExportPath(t.sender, 'b.csv')).toBeNull();
    expect(dialog.calls).toHaveLength(1);
    expect(t.logger.records.some((r) => r.msg.includes('already open'))).toBe(true);
    dialog.release();
    expect(await first).toBe('/home/ada/calls.csv');
    // Once closed, the next request opens a dialog again; the other purpose was never blocked.
    dialog.pending = false;
    expect(await t.dialogs.chooseExportPath(t.sender, 'c.csv')).toBe('/home/ada/calls.csv');
    expect(await t.dialogs.chooseContactsFile(t.sender)).toBe('/home/ada/calls.csv');
  });

  it('shows an unparented dialog when the asking window is gone', async () => {
    t.win.destroy();
    dialog.answer = '/home/ada/c.csv';
    expect(await t.dialogs.chooseContactsFile(t.sender)).toBe('/home/ada/c.csv');
    expect(dialog.calls[0]?.parent).toBeNull();
  });
});
