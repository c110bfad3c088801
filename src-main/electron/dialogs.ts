/**
 * The native file dialogs, opened by main on a page's request (settings:choose-contacts-file,
 * history:export-csv) and attached to the window that asked, so they are modal to it. The page
 * never names a path: it gets back only what the user picked in the dialog (and the export only
 * the file's name). One dialog per purpose at a time: a page that asks again while one is open is
 * answered "cancelled", so a misbehaving page cannot stack dialogs.
 */
import type {
  BrowserWindow,
  Dialog,
  OpenDialogOptions,
  SaveDialogOptions,
  WebContents,
} from 'electron';
import { join } from 'node:path';
import type { Logger } from '../../src-shared/process/log.ts';

export interface DialogsDeps {
  dialog: Pick<Dialog, 'showOpenDialog' | 'showSaveDialog'>;
  /** The window a page lives in (Electron's BrowserWindow.fromWebContents). */
  windowOf: (contents: WebContents) => BrowserWindow | null;
  /** Where the save dialog starts (the user's Documents folder). */
  documentsFolder: () => string;
  logger: Logger;
}

type Purpose = 'contacts' | 'export' | 'diagnostics';

export class NativeDialogs {
  private readonly d: DialogsDeps;
  private readonly open = new Set<Purpose>();

  constructor(deps: DialogsDeps) {
    this.d = deps;
  }

  /** A CSV or vCard file to read caller names from; null when the user cancels. */
  chooseContactsFile(sender: WebContents): Promise<string | null> {
    return this.once('contacts', sender, async (win) => {
      const options: OpenDialogOptions = {
        title: 'Choose your contacts file',
        buttonLabel: 'Use this file',
        properties: ['openFile'],
        filters: [
          { name: 'Contacts (CSV, vCard)', extensions: ['csv', 'vcf', 'vcard', 'txt'] },
          { name: 'All files', extensions: ['*'] },
        ],
      };
      const r = win
        ? await this.d.dialog.showOpenDialog(win, options)
        : await this.d.dialog.showOpenDialog(options);
      return r.canceled ? null : (r.filePaths[0] ?? null);
    });
  }

  /** Where to save an export; null when the user cancels. */
  chooseExportPath(sender: WebContents, defaultName: string): Promise<string | null> {
    return this.once('export', sender, async (win) => {
      const options: SaveDialogOptions = {
        title: 'Export call history',
        buttonLabel: 'Export',
        defaultPath: join(this.d.documentsFolder(), defaultName),
        filters: [{ name: 'CSV (comma-separated values)', extensions: ['csv'] }],
        properties: ['showOverwriteConfirmation', 'createDirectory'],
      };
      const r = win
        ? await this.d.dialog.showSaveDialog(win, options)
        : await this.d.dialog.showSaveDialog(options);
      return r.canceled || !r.filePath ? null : r.filePath;
    });
  }

  /** Where to save a diagnostics archive (from the tray: no window to attach to); null: cancelled. */
  chooseDiagnosticsPath(defaultName: string): Promise<string | null> {
    return this.once('diagnostics', null, async () => {
      const r = await this.d.dialog.showSaveDialog({
        title: 'Save diagnostics',
        buttonLabel: 'Save',
        defaultPath: join(this.d.documentsFolder(), defaultName),
        filters: [{ name: 'Diagnostics archive (.tar.gz)', extensions: ['gz'] }],
        properties: ['showOverwriteConfirmation', 'createDirectory'],
      });
      return r.canceled || !r.filePath ? null : r.filePath;
    });
  }

  private async once(
    purpose: Purpose,
    sender: WebContents | null,
    show: (win: BrowserWindow | null) => Promise<string | null>,
  ): Promise<string | null> {
    if (this.open.has(purpose)) {
      this.d.logger.warn('a file dialog is already open; second request ignored', { purpose });
      return null;
    }
    this.open.add(purpose);
    try {
      const win = sender ? this.d.windowOf(sender) : null;
      return await show(win && !win.isDestroyed() ? win : null);
    } finally {
      this.open.delete(purpose);
    }
  }
}
