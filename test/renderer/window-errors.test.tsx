// @vitest-environment jsdom
/**
 * A window's errors reach main's log through the one channel for them (`reportError`), and a
 * render error shows a friendly line in the window's language instead of a blank window. The page
 * is started the way each window starts (`mount`, with the preload's API on `window.screenpop`).
 */
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RendererErrorReport } from '../../src-main/ipc/contract.ts';
import { ErrorReporter, MAX_REPORTS } from '../../src-renderer/shared/error-reporting.ts';
import { mount } from '../../src-renderer/shared/mount.tsx';
import { fakeApi } from './fake-api.ts';

afterEach(cleanup);

function Broken(): never {
  throw Object.assign(new Error('cannot read properties of undefined'), { code: 'E_RENDER' });
}

describe('a page that fails to render', () => {
  it('shows the friendly line in the window’s language, reports the error with its component stack, and closes', async () => {
    const { api } = fakeApi();
    api.getLocale.mockResolvedValue({ locale: 'de' });
    (window as { screenpop?: unknown }).screenpop = api;
    document.body.innerHTML = '<div id="root"></div>';
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await act(async () => mount(() => <Broken />));
      const alert = await screen.findByRole('alert');
      expect(alert.textContent).toMatch(/^In diesem Fenster ist etwas schiefgegangen\./);
      expect(document.documentElement.lang).toBe('de');
      const reports = api.reportError.mock.calls.map(([r]) => r);
      const render = reports.find((r) => r.kind === 'render');
      expect(render).toMatchObject({
        kind: 'render',
        name: 'Error',
        message: 'cannot read properties of undefined',
      });
      expect(render?.stack).toMatch(/Broken/);
      expect(render?.componentStack).toMatch(/Broken/);
      fireEvent.click(screen.getByRole('button', { name: 'Schließen' }));
      await waitFor(() => expect(api.closeWindow).toHaveBeenCalledTimes(1));
    } finally {
      quiet.mockRestore();
      delete (window as { screenpop?: unknown }).screenpop;
    }
  });
});

describe('uncaught errors and unhandled rejections', () => {
  function listening() {
    const sent: RendererErrorReport[] = [];
    const reporter = new ErrorReporter({
      reportError: async (r) => void sent.push(r),
    });
    const stop = reporter.listen(window);
    return { sent, stop };
  }

  it('reports an uncaught error with its stack, and a rejection whatever its reason', () => {
    const { sent, stop } = listening();
    const error = new TypeError('x is not a function');
    window.dispatchEvent(new ErrorEvent('error', { error, message: error.message }));
    const rejection = Object.assign(new Event('unhandledrejection'), {
      reason: { status: 500, detail: 'lookup failed' },
    });
    window.dispatchEvent(rejection);
    window.dispatchEvent(Object.assign(new Event('unhandledrejection'), { reason: 'plain text' }));
    stop();
    // Handled here, so that the test environment does not take it for an uncaught error.
    const handled = (e: Event) => e.preventDefault();
    window.addEventListener('error', handled);
    window.dispatchEvent(new ErrorEvent('error', { error: new Error('after stop') }));
    window.removeEventListener('error', handled);
    expect(sent).toEqual([
      expect.objectContaining({ kind: 'error', name: 'TypeError', message: 'x is not a function' }),
      {
        kind: 'unhandledrejection',
        name: 'object',
        message: '{"status":500,"detail":"lookup failed"}',
      },
      { kind: 'unhandledrejection', name: 'string', message: 'plain text' },
    ]);
    expect(sent[0]?.stack).toMatch(/window-errors\.test\.tsx/);
  });

  it(`sends at most ${MAX_REPORTS} reports from a window in an error loop, and survives a bridge that fails`, () => {
    let calls = 0;
    const reporter = new ErrorReporter({
      reportError: () => {
        calls++;
        if (calls % 2) throw new Error('bridge gone');
        return Promise.reject(new Error('main said no'));
      },
    });
    for (let i = 0; i < 100; i++)
      expect(() =>
        reporter.report({ kind: 'error', name: 'Error', message: `n${i}` }),
      ).not.toThrow();
    expect(calls).toBe(MAX_REPORTS);
  });
});
