/**
 * Errors in a window reach main's log (the renderer has none of its own) through the one IPC
 * channel for them (`reportError`, 'renderer:error'): uncaught errors, unhandled rejections, and
 * render errors the page's ErrorBoundary catches. Main checks the sender, caps the sizes and
 * scrubs secrets like every log line; here a report is built from what the error gives and sent
 * at most MAX_REPORTS times per page, so a window in an error loop cannot fill the log.
 */
import type { RendererErrorReport, ScreenpopApi } from '../../src-main/ipc/contract.ts';

export const MAX_REPORTS = 20;

/** Turns anything thrown into a report (a rejected promise may hold a string or an object). */
export function errorReport(
  kind: RendererErrorReport['kind'],
  thrown: unknown,
  componentStack?: string,
): RendererErrorReport {
  const report: RendererErrorReport =
    thrown instanceof Error
      ? { kind, name: thrown.name, message: thrown.message }
      : { kind, name: typeof thrown, message: describe(thrown) };
  if (thrown instanceof Error && typeof thrown.stack === 'string') report.stack = thrown.stack;
  if (componentStack) report.componentStack = componentStack;
  return report;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Sends reports to main, at most MAX_REPORTS; a failed send is dropped (never reported again). */
export class ErrorReporter {
  private sent = 0;
  private readonly api: Pick<ScreenpopApi, 'reportError'>;

  constructor(api: Pick<ScreenpopApi, 'reportError'>) {
    this.api = api;
  }

  report(report: RendererErrorReport): void {
    if (this.sent >= MAX_REPORTS) return;
    this.sent++;
    try {
      void this.api.reportError(report).catch(() => {});
    } catch {
      // The bridge itself is gone (the window is closing): nothing left to tell.
    }
  }

  /** Listens for the window's uncaught errors and unhandled rejections; returns the removal. */
  listen(target: Pick<Window, 'addEventListener' | 'removeEventListener'>): () => void {
    const onError = (e: ErrorEvent): void =>
      this.report(errorReport('error', e.error ?? e.message));
    const onRejection = (e: PromiseRejectionEvent): void =>
      this.report(errorReport('unhandledrejection', e.reason));
    target.addEventListener('error', onError);
    target.addEventListener('unhandledrejection', onRejection);
    return () => {
      target.removeEventListener('error', onError);
      target.removeEventListener('unhandledrejection', onRejection);
    };
  }
}
