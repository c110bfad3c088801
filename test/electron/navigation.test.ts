import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { App, Protocol, Session, WebContents } from 'electron';
import { AppOrigin } from '../../src-main/electron/app-origin.ts';
import { contentSecurityPolicy } from '../../src-shared/ui/content-security-policy.ts';
import { registerAppProtocol, resolveAppFile } from '../../src-main/electron/app-protocol.ts';
import { SafeExternalOpener } from '../../src-main/electron/external.ts';
import {
  addCspHeader,
  denyAllPermissions,
  hardenAllWebContents,
  hardenWebContents,
  secureWebPreferences,
} from '../../src-main/electron/security.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import {
  app,
  FakeWebContents,
  protocol,
  resetElectronMock,
  session,
  shell,
} from '../support/electron-mock.ts';

const origin = new AppOrigin(null);

function hardened() {
  const contents = new FakeWebContents();
  const opener = new SafeExternalOpener(shell, () => ['https'], silentLogger);
  hardenWebContents(contents as unknown as WebContents, {
    origin,
    logger: silentLogger,
    openExternal: (url) => void opener.tryOpen(url),
  });
  return contents;
}

beforeEach(() => resetElectronMock());

describe('navigation and new windows', () => {
  it('denies every navigation; a vetted https link opens in the browser instead', async () => {
    const wc = hardened();
    expect(wc.attemptNavigation('will-navigate', 'https://crm.example.com/a')).toBe(true);
    expect(wc.attemptNavigation('will-navigate', 'app://screenpop/settings.html')).toBe(true);
    for (const bad of [
      'javascript:alert(1)',
      'file:///etc/passwd',
      'http://example.com/',
      'data:text/html,hi',
    ])
      expect(wc.attemptNavigation('will-navigate', bad)).toBe(true);
    await vi.waitFor(() => expect(shell.openExternal).toHaveBeenCalledTimes(1));
    expect(shell.openExternal.mock.calls[0]?.[0]).toBe('https://crm.example.com/a');
  });

  it('denies every new window', async () => {
    const wc = hardened();
    expect(wc.windowOpenHandler?.({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
    expect(wc.windowOpenHandler?.({ url: 'app://screenpop/popup.html' })).toEqual({
      action: 'deny',
    });
    expect(wc.windowOpenHandler?.({ url: 'file:///C:/Windows/System32/calc.exe' })).toEqual({
      action: 'deny',
    });
    await vi.waitFor(() => expect(shell.openExternal).toHaveBeenCalledTimes(1));
    expect(shell.openExternal.mock.calls[0]?.[0]).toBe('https://example.com/');
  });

  it('denies redirects away from our origin and webviews', () => {
    const wc = hardened();
    expect(wc.attemptNavigation('will-redirect', 'https://evil.example/')).toBe(true);
    expect(wc.attemptNavigation('will-redirect', 'app://screenpop/popup.html')).toBe(false);
    let prevented = false;
    wc.emit('will-attach-webview', { preventDefault: () => (prevented = true) }, {}, {});
    expect(prevented).toBe(true);
  });

  it('hardens every web contents the app creates', () => {
    hardenAllWebContents(app as unknown as App, {
      origin,
      logger: silentLogger,
      openExternal: () => {},
    });
    const wc = new FakeWebContents();
    app.emit('web-contents-created', {}, wc);
    expect(wc.windowOpenHandler?.({ url: 'https://x.example/' })).toEqual({ action: 'deny' });
    expect(wc.attemptNavigation('will-navigate', 'https://x.example/')).toBe(true);
  });
});

describe('session', () => {
  it('denies every permission request and check', () => {
    denyAllPermissions(session.defaultSession as unknown as Session, silentLogger);
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) {
      const cb = vi.fn();
      session.defaultSession.permissionRequestHandler?.({}, p, cb);
      expect(cb).toHaveBeenCalledWith(false);
      expect(session.defaultSession.permissionCheckHandler?.({}, p)).toBe(false);
    }
  });

  it('sends our CSP as a header for our pages only, replacing any other', () => {
    const csp = contentSecurityPolicy(null);
    addCspHeader(session.defaultSession as unknown as Session, origin, csp);
    const ours = vi.fn();
    session.defaultSession.headersListener?.(
      {
        url: 'app://screenpop/popup.html',
        responseHeaders: { 'content-security-policy': ['default-src *'], 'X-Other': ['1'] },
      },
      ours,
    );
    expect(ours).toHaveBeenCalledWith({
      responseHeaders: { 'X-Other': ['1'], 'Content-Security-Policy': [csp] },
    });
    const theirs = vi.fn();
    session.defaultSession.headersListener?.(
      { url: 'https://example.com/', responseHeaders: {} },
      theirs,
    );
    expect(theirs).toHaveBeenCalledWith({});
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
  });

  it('gives every window the secure preferences', () => {
    expect(secureWebPreferences('/app/dist/preload/preload.cjs', false)).toMatchObject({
      preload: '/app/dist/preload/preload.cjs',
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      devTools: false,
    });
  });
});

describe('app:// protocol', () => {
  let base: string;
  let root: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'sp-renderer-'));
    root = join(base, 'renderer');
    await mkdir(join(root, 'assets'), { recursive: true });
    await writeFile(join(root, 'popup.html'), '<!doctype html><p>popup</p>');
    await writeFile(join(root, 'assets', 'popup.js'), 'console.log(1)');
    await writeFile(join(base, 'sp-secret.txt'), 'secret'); // what a traversal would reach
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('serves files under the renderer folder with the CSP header, and nothing else', async () => {
    const csp = contentSecurityPolicy(null);
    registerAppProtocol(protocol as unknown as Protocol, root, csp, silentLogger);
    const handler = protocol.handlers.get('app');
    if (!handler) throw new Error('no handler');
    const ok = await handler(new Request('app://screenpop/popup.html'));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-security-policy')).toBe(csp);
    expect(ok.headers.get('content-type')).toContain('text/html');
    expect(await ok.text()).toContain('popup');
    expect(
      (await handler(new Request('app://screenpop/assets/popup.js'))).headers.get('content-type'),
    ).toContain('javascript');
    for (const bad of [
      'app://screenpop/../sp-secret.txt',
      'app://screenpop/%2e%2e/sp-secret.txt',
      'app://screenpop/..%2fsp-secret.txt',
      'app://other/popup.html',
      'app://screenpop/missing.html',
      'app://screenpop/%00.html',
    ]) {
      const r = await handler(new Request(bad));
      expect(r.status, bad).toBe(404);
    }
    expect(
      (await handler(new Request('app://screenpop/popup.html', { method: 'POST', body: 'x' })))
        .status,
    ).toBe(404);
  });

  it('resolves only inside the root', () => {
    expect(resolveAppFile('/r', 'app://screenpop/popup.html')).toBe('/r/popup.html');
    expect(resolveAppFile('/r', 'app://screenpop/..%2F..%2Fetc/passwd')).toBeNull();
    expect(resolveAppFile('/r', 'file:///r/popup.html')).toBeNull();
  });
});
