import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import { CallPresenter } from '../../src-main/core/app/call-presenter.ts';
import { HistoryStore } from '../../src-main/core/app/history-store.ts';
import { SafeExternalOpener } from '../../src-main/electron/external.ts';
import { silentLogger } from '../../src-main/core/log.ts';
import { FakeClock } from '../support/fake-clock.ts';
import { resetElectronMock, shell } from '../support/electron-mock.ts';
import { FakeClipboard, FakeNotifier, FakePopup } from '../app/support.ts';

beforeEach(() => resetElectronMock());

describe('SafeExternalOpener', () => {
  it.each([
    'javascript:alert(document.cookie)',
    ' javascript:alert(1)',
    'JAVASCRIPT:alert(1)',
    'file:///etc/passwd',
    'file://server/share/x.exe',
    'http://crm.example.com/',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'ms-msdt:/id PCWDiagnostic',
    'search-ms:query=x',
    'https://user:pass@crm.example.com/',
    'crm.example.com/no-scheme',
    '',
  ])('never hands %j to the OS', async (url) => {
    const opener = new SafeExternalOpener(
      shell,
      () => ['https', 'javascript', 'file'],
      silentLogger,
    );
    await expect(opener.open(url)).rejects.toThrow();
    expect(await opener.tryOpen(url)).toBe(false);
    expect(shell.openExternal).not.toHaveBeenCalled();
  });

  it('opens https, and a scheme the administrator allowed, as parsed', async () => {
    const opener = new SafeExternalOpener(shell, () => ['https', 'salesforce'], silentLogger);
    await opener.open('https://CRM.example.com/a b');
    await opener.open('salesforce://search?q=1');
    expect(shell.openExternal.mock.calls.map((c) => c[0])).toEqual([
      'https://crm.example.com/a%20b',
      'salesforce://search?q=1',
    ]);
  });

  it.each([
    '<img src=x onerror=alert(1)>',
    '"; rm -rf /',
    '\u202E1234',
    'x'.repeat(5000),
    '?next=javascript:alert(1)#',
  ])('keeps a hostile caller ID %# inside the CRM link it opens', async (hostile) => {
    const clock = new FakeClock();
    const opener = new SafeExternalOpener(shell, () => ['https'], silentLogger);
    const presenter = new CallPresenter({
      clock,
      logger: silentLogger,
      directory: { lookup: () => hostile, format: (n) => n },
      history: new HistoryStore({
        path: 'mem',
        clock,
        logger: silentLogger,
        limit: 10,
        write: async () => {},
      }),
      notifier: new FakeNotifier(),
      popup: new FakePopup(),
      urlOpener: opener,
      clipboard: new FakeClipboard(),
      settings: () => ({
        doNotDisturb: false,
        sound: true,
        autoOpenCrm: false,
        crmUrlTemplate: 'https://crm.example.com/find?phone={from}&name={caller_name}',
        crmAllowedSchemes: ['https'],
        popupLingerSec: 4,
      }),
    });
    presenter.handlePop({
      callId: 'c1',
      from: hostile,
      to: '101',
      eventId: 'e1',
      timestamp: clock.now(),
      receivedAt: clock.now(),
      source: 'direct',
    });
    expect(await presenter.openCrm('c1')).toEqual({ ok: true });
    const opened = new URL(String(shell.openExternal.mock.calls[0]?.[0]));
    expect(opened.origin).toBe('https://crm.example.com');
    expect(opened.pathname).toBe('/find');
    expect([...opened.searchParams.keys()]).toEqual(['phone', 'name']);
    expect(opened.hash).toBe('');
  });
});
