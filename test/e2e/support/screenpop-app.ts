/**
 * Launches the real app (the built dist/, as `npm start` runs it) in Electron with playwright-core's
 * `_electron.launch`, inside a DesktopSession, and gives the tests what they read: the app's
 * pages by their app:// address, its log file, the main-process hooks (main-hooks.cjs), and any
 * console error, warning or CSP report from any page.
 *
 * The Electron executable is the one npm start would use (scripts/electron-binary.ts): passing it
 * as executablePath keeps playwright from starting Electron's first-run download.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { hostLocateInput, locateElectron } from '../../../scripts/electron-binary.ts';
import type { LogRecord } from '../../../src-shared/process/log.ts';
import { waitFor } from '../../../rigs/wait.ts';
import type { DesktopSession } from './desktop-session.ts';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HOOKS = fileURLToPath(new URL('./main-hooks.cjs', import.meta.url));

export type PageName = 'settings' | 'history' | 'popup';
export const pageUrl = (name: PageName) => `app://screenpop/${name}.html`;

/** The Electron executable, or why there is none (the reason every scenario then skips with). */
export function electronForE2E(): { ok: true; path: string } | { ok: false; reason: string } {
  const located = locateElectron(hostLocateInput(process.env));
  if (located.ok) return { ok: true, path: located.binary.path };
  return {
    ok: false,
    reason: `no Electron binary: ${located.missing} Provide one with ELECTRON_OVERRIDE_DIST_PATH=<unpacked Electron folder>, or run npm start once with network access.`,
  };
}

export interface MenuItemView {
  id: string | null;
  label: string;
  type: string;
  checked: boolean;
  enabled: boolean;
  submenu: MenuItemView[] | null;
}

export interface NotificationView {
  title: string;
  body: string;
  /** The labels of its action buttons (Electron's `actions`). */
  actions: string[];
  shown: boolean;
  failed: string | null;
}

export interface RunningApp {
  app: ElectronApplication;
  executable: string;
  userData: string;
  /** Console errors/warnings and CSP reports from every page so far. */
  problems: string[];
  page(name: PageName, timeoutMs?: number): Promise<Page>;
  /** The tray menus set so far, oldest first. */
  menus(): Promise<MenuItemView[][]>;
  /** Clicks the current tray menu's item with this id, as the tray would. */
  clickTray(id: string): Promise<void>;
  notifications(): Promise<NotificationView[]>;
  /** The URL of the focused window's page, or null when none of ours has focus. */
  focusedPage(): Promise<string | null>;
  windowState(name: PageName): Promise<{ visible: boolean; focused: boolean } | null>;
  log(): Promise<LogRecord[]>;
  waitForLog(msg: string, timeoutMs?: number): Promise<LogRecord>;
  close(): Promise<void>;
}

/** The app's data folder in a session: Electron's appData (XDG_CONFIG_HOME) + productName. */
export function userDataIn(session: DesktopSession): string {
  return join(session.env.XDG_CONFIG_HOME ?? join(session.home, '.config'), 'Screenpop');
}

export async function writeSettings(session: DesktopSession, settings: object): Promise<void> {
  const dir = userDataIn(session);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'settings.json'), JSON.stringify({ version: 1, ...settings }));
}

export async function launchScreenpop(
  session: DesktopSession,
  executable: string,
  options: { env?: Record<string, string>; args?: string[] } = {},
): Promise<RunningApp> {
  const app = await _electron.launch({
    executablePath: executable,
    // --disable-dev-shm-usage: Chromium's renderers crash on a container's small /dev/shm;
    // passed here, not left to playwright's loader (the second launch has none, nor does the app).
    args: ['-r', HOOKS, ROOT, '--disable-dev-shm-usage', ...(options.args ?? [])],
    cwd: ROOT,
    env: { ...session.env, ...options.env } as Record<string, string>,
    timeout: 60_000,
  });
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (msg) => {
      const text = msg.text();
      if (
        msg.type() === 'error' ||
        msg.type() === 'warning' ||
        /Content Security Policy/i.test(text)
      )
        problems.push(`${page.url()} console.${msg.type()}: ${text}`);
    });
    page.on('pageerror', (err) => problems.push(`${page.url()} pageerror: ${err.message}`));
  };
  for (const page of app.windows()) watch(page);
  app.on('window', watch);

  const userData = await app.evaluate(({ app: electronApp }) => electronApp.getPath('userData'));
  const logFile = join(userData, 'logs', 'screenpop.log');
  const log = async (): Promise<LogRecord[]> => {
    const text = await readFile(logFile, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogRecord);
  };
  let records: LogRecord[] = [];

  const running: RunningApp = {
    app,
    executable,
    userData,
    problems,
    async page(name, timeoutMs = 30_000) {
      let found: Page | undefined;
      await waitFor(
        () => (found = app.windows().find((p) => p.url() === pageUrl(name))) !== undefined,
        `the ${name} page`,
        { timeoutMs, intervalMs: 100 },
      );
      return found as Page;
    },
    menus: () =>
      app.evaluate(
        () =>
          (globalThis as unknown as { __screenpopE2E: { menus: MenuItemView[][] } }).__screenpopE2E
            .menus,
      ),
    async clickTray(id) {
      const clicked = await app.evaluate((_electron, itemId) => {
        const menu = (
          globalThis as unknown as {
            __screenpopE2E: { menu: Electron.Menu | null };
          }
        ).__screenpopE2E.menu;
        const item = menu?.getMenuItemById(itemId);
        if (!item) return false;
        item.click();
        return true;
      }, id);
      if (!clicked) throw new Error(`the tray menu has no item "${id}"`);
    },
    notifications: () =>
      app.evaluate(
        () =>
          (globalThis as unknown as { __screenpopE2E: { notifications: NotificationView[] } })
            .__screenpopE2E.notifications,
      ),
    focusedPage: () =>
      app.evaluate(
        ({ BrowserWindow }) => BrowserWindow.getFocusedWindow()?.webContents.getURL() ?? null,
      ),
    windowState: (name) =>
      app.evaluate(({ BrowserWindow }, url) => {
        const win = BrowserWindow.getAllWindows().find((w) => w.webContents.getURL() === url);
        return win ? { visible: win.isVisible(), focused: win.isFocused() } : null;
      }, pageUrl(name)),
    log,
    async waitForLog(msg, timeoutMs = 30_000) {
      let hit: LogRecord | undefined;
      const deadline = Date.now() + timeoutMs;
      while (!hit) {
        records = await log();
        hit = records.find((r) => r.msg === msg);
        if (hit) break;
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for the log line "${msg}"; last lines:\n${records
              .slice(-15)
              .map((r) => JSON.stringify(r))
              .join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
      return hit;
    },
    async close() {
      await app.close().catch(() => undefined);
    },
  };
  return running;
}

/** Runs the executable once more on the same profile, as a user's second launch; its exit code. */
export function secondLaunch(
  session: DesktopSession,
  executable: string,
  timeoutMs = 30_000,
): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, ['--no-sandbox', ROOT, '--disable-dev-shm-usage'], {
      cwd: ROOT,
      env: session.env,
      stdio: 'ignore',
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the second launch did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
