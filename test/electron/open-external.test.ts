import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import { SafeExternalOpener } from '../../src-main/electron/external.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { resetElectronMock, shell } from '../support/electron-mock.ts';
import { presenterHarness } from '../../rigs/app-harness.ts';

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
    const opener = new SafeExternalOpener(shell, () => ['https'], silentLogger);
    const { presenter, pop } = presenterHarness({
      urlOpener: opener,
      directory: {
        lookup: () => hostile,
        identify: () => ({ name: hostile, source: 'contacts', company: null, numberKind: null }),
        format: (n) => n,
      },
      settings: { crmUrlTemplate: 'https://crm.example.com/find?phone={from}&name={caller_name}' },
    });
    presenter.handlePop(pop('c1', hostile));
    expect(await presenter.openCrm('c1')).toEqual({ ok: true });
    const opened = new URL(String(shell.openExternal.mock.calls[0]?.[0]));
    expect(opened.origin).toBe('https://crm.example.com');
    expect(opened.pathname).toBe('/find');
    expect([...opened.searchParams.keys()]).toEqual(['phone', 'name']);
    expect(opened.hash).toBe('');
  });
});
