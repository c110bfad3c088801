/**
 * The main side of every invoke channel of the contract, bound to the app runtime and the windows.
 * Handlers stay thin: arguments are already validated and the sender checked (ipc-main.ts).
 */
import { basename } from 'node:path';
import { INVOKE_CHANNELS } from '../ipc/contract.ts';
import { exportFileName } from '../core/app/history-csv.ts';
import type { AppRuntime } from '../core/app/runtime.ts';
import type { Clock } from '../../src-shared/clock.ts';
import type { Logger } from '../../src-shared/log.ts';
import type { NativeDialogs } from './dialogs.ts';
import type { TypedIpcMain } from './ipc-main.ts';
import type { PopupWindow } from './popup-window.ts';
import type { AppWindows } from './windows.ts';

export interface IpcContext {
  runtime: AppRuntime;
  popup: PopupWindow;
  windows: AppWindows;
  dialogs: NativeDialogs;
  clock: Clock;
  logger: Logger;
}

export function registerIpcHandlers(ipc: TypedIpcMain, ctx: IpcContext): void {
  const { runtime, popup, windows, dialogs } = ctx;
  ipc.handle('popup:ready', () => popup.currentCards());
  ipc.handle('popup:dismiss', (_e, callId) => runtime.presenter.dismiss(callId));
  ipc.handle('popup:open-crm', async (_e, callId) => {
    const r = await runtime.presenter.openCrm(callId);
    if (!r.ok) ctx.logger.warn('CRM link not opened', { reason: r.message });
  });
  ipc.handle('popup:copy-number', (_e, callId) => {
    runtime.presenter.copyNumber(callId);
  });
  ipc.handle('popup:content-size', (_e, height) => popup.setContentHeight(height));
  ipc.handle('status:get', () => runtime.status());
  ipc.handle('settings:get', () => runtime.settingsView());
  ipc.handle('settings:save', (_e, patch) => runtime.saveSettings(patch));
  ipc.handle('settings:test-connection', (_e, patch) => runtime.testConnection(patch));
  ipc.handle('settings:preview-crm', (_e, template) => runtime.previewCrm(template));
  ipc.handle('demo:start', () => runtime.startDemo());
  ipc.handle('history:list', () => runtime.history());
  ipc.handle('history:mark-seen', () => runtime.markHistorySeen());
  ipc.handle('history:copy-number', (_e, callId) => {
    runtime.copyHistoryNumber(callId);
  });
  ipc.handle('history:open-crm', async (_e, callId) => {
    const r = await runtime.openHistoryCrm(callId);
    if (!r.ok) ctx.logger.warn('CRM link not opened', { reason: r.message });
  });
  ipc.handle('history:export-csv', async (event, callIds) => {
    const path = await dialogs.chooseExportPath(event.sender, exportFileName(ctx.clock.now()));
    if (!path) return { status: 'cancelled' };
    try {
      const count = await runtime.exportHistoryCsv(path, callIds);
      return { status: 'saved', fileName: basename(path), count };
    } catch (err) {
      ctx.logger.error('history export failed', { error: err });
      return {
        status: 'failed',
        message: 'The file could not be written there. Choose another folder and try again.',
      };
    }
  });
  ipc.handle('settings:choose-contacts-file', async (event) => {
    const path = await dialogs.chooseContactsFile(event.sender);
    return path ? runtime.pickContactsFile(path) : { status: 'cancelled' };
  });
  ipc.handle('window:close', (event) => {
    if (event.sender === popup.window.webContents) runtime.presenter.hidePopup();
    else windows.closeFor(event.sender);
  });
  const missing = INVOKE_CHANNELS.filter((c) => !ipc.handled().has(c));
  if (missing.length > 0) ctx.logger.error('IPC channels without a handler', { missing });
}
