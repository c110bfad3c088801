/**
 * The main side of every invoke channel of the contract, bound to the app runtime and the windows.
 * Handlers stay thin: arguments are already validated and the sender checked (ipc-main.ts).
 */
import { basename } from 'node:path';
import { exportFileName } from '../core/history/history-csv.ts';
import type { AppRuntime } from '../core/app/runtime.ts';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import type { NativeDialogs } from './dialogs.ts';
import type { IpcHandlers, TypedIpcMain } from './ipc-main.ts';
import type { PopupWindow } from './popup-window.ts';
import type { AppWindows } from './windows.ts';
import type { CallActionOutcome } from '../core/calls/call-actions.ts';
import type { CallActionView } from '../ipc/contract.ts';
import { render } from '../../src-shared/i18n/phrase.ts';

export interface IpcContext {
  runtime: AppRuntime;
  popup: PopupWindow;
  windows: AppWindows;
  dialogs: NativeDialogs;
  clock: Clock;
  logger: Logger;
  language: LocaleState;
}

/**
 * Every invoke channel's handler, as one object typed over the contract: a channel without a
 * handler, or a handler for a channel the contract does not have, fails to compile
 * (test/electron/ipc-handlers.test.ts shows both).
 */
export function ipcHandlers(ctx: IpcContext): IpcHandlers {
  const { runtime, popup, windows, dialogs } = ctx;
  /** An outcome for the page: the refusal's words in the user's language. */
  const view = async (outcome: Promise<CallActionOutcome>): Promise<CallActionView> => {
    const r = await outcome;
    return r.ok
      ? { ok: true }
      : { ok: false, refusal: r.refusal, message: render(r.words, ctx.language.current()) };
  };
  return {
    'popup:ready': () => popup.currentCards(),
    'popup:dismiss': (_e, callId) => runtime.presenter.dismiss(callId),
    'popup:open-crm': async (_e, callId) => {
      const r = await runtime.presenter.openCrm(callId);
      if (!r.ok) ctx.logger.warn('CRM link not opened', { reason: r.message });
    },
    'popup:copy-number': (_e, callId) => {
      runtime.presenter.copyNumber(callId);
    },
    'popup:save-note': (_e, callId, note) =>
      runtime.presenter.saveNote(callId, note.text, note.disposition, note.submit),
    'popup:content-size': (_e, height) => popup.setContentHeight(height),
    'calls:offered': () => runtime.calls.offered(),
    'popup:call-back': (_e, callId) => view(runtime.calls.callBack('popup', callId)),
    'popup:transfer': (_e, callId, to, mode) => view(runtime.calls.transfer(callId, to, mode)),
    'popup:complete-transfer': (_e, callId) => view(runtime.calls.completeTransfer(callId)),
    'popup:cancel-transfer': (_e, callId) => view(runtime.calls.cancelTransfer(callId)),
    'calls:consultations': () => runtime.calls.consultations(),
    'popup:colleagues': (_e, query) => runtime.calls.colleagues(query),
    'popup:hangup': (_e, callId) => view(runtime.calls.hangup(callId)),
    'popup:answer': (_e, callId) => view(runtime.calls.answer(callId)),
    'popup:decline': (_e, callId) => view(runtime.calls.decline(callId)),
    'calls:remote-answer': (_e, callId) => {
      const r = runtime.calls.remoteAnswer(callId);
      return r.words ? { offered: r.offered, why: render(r.words, ctx.language.current()) } : r;
    },
    'status:get': () => runtime.status(),
    'i18n:get': () => ({ locale: ctx.language.locale }),
    'settings:get': () => runtime.settingsView(),
    'settings:save': (_e, patch) => runtime.saveSettings(patch),
    'settings:test-connection': (_e, patch) => runtime.testConnection(patch),
    'settings:preview-crm': (_e, template) => runtime.previewCrm(template),
    'settings:test-crm-lookup': (_e, patch, number) => runtime.testCrmLookup(patch, number),
    'demo:start': () => runtime.startDemo(),
    'org:sign-in': (_e, relay) => runtime.signInToOrganisation(relay),
    'org:enrol': (_e, relay, code) => runtime.enrolInOrganisation(relay, code),
    'org:cancel-sign-in': () => runtime.cancelOrganisationSignIn(),
    'org:sign-out': () => runtime.signOutOfOrganisation(),
    'history:list': () => runtime.history(),
    'history:mark-seen': () => runtime.markHistorySeen(),
    'history:copy-number': (_e, callId) => {
      runtime.copyHistoryNumber(callId);
    },
    'history:open-crm': async (_e, callId) => {
      const r = await runtime.openHistoryCrm(callId);
      if (!r.ok) ctx.logger.warn('CRM link not opened', { reason: r.message });
    },
    'history:call-back': (_e, callId) => view(runtime.calls.callBack('history', callId)),
    'history:selection': (event) => windows.takeSelection(event.sender),
    'dial:call': (_e, number) => view(runtime.calls.dial(number)),
    'history:export-csv': async (event, callIds) => {
      const path = await dialogs.chooseExportPath(event.sender, exportFileName(ctx.clock.now()));
      if (!path) return { status: 'cancelled' };
      try {
        const count = await runtime.exportHistoryCsv(path, callIds);
        return { status: 'saved', fileName: basename(path), count };
      } catch (err) {
        ctx.logger.error('history export failed', { error: err });
        return {
          status: 'failed',
          message: ctx.language.current().t('desktop.export-failed'),
        };
      }
    },
    'settings:choose-contacts-file': async (event) => {
      const path = await dialogs.chooseContactsFile(event.sender);
      return path ? runtime.pickContactsFile(path) : { status: 'cancelled' };
    },
    'renderer:error': (event, report) => {
      // Through the logger like every line: secrets and the home folder scrubbed, stack bounded.
      ctx.logger.error('error in a window', {
        page: pageOf(event.senderFrame?.url),
        kind: report.kind,
        error: {
          name: report.name,
          message: report.message,
          ...(report.stack ? { stack: report.stack } : {}),
          ...(report.componentStack ? { componentStack: report.componentStack } : {}),
        },
      });
    },
    'window:close': (event) => {
      if (popup.owns(event.sender)) runtime.presenter.hidePopup();
      else windows.closeFor(event.sender);
    },
  };
}

/** The page's file name (popup.html), never its query. */
function pageOf(url: string | undefined): string {
  try {
    return new URL(url ?? '').pathname.split('/').pop()?.slice(0, 64) || '(none)';
  } catch {
    return '(none)';
  }
}

export function registerIpcHandlers(ipc: TypedIpcMain, ctx: IpcContext): void {
  ipc.handleAll(ipcHandlers(ctx));
}
