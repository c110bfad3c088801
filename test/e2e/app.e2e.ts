/**
 * Screenpop as installed and used, in real Electron: `npm run test:e2e` (vitest.e2e.config.ts).
 *
 * Each scenario launches the built app (dist/, as npm start runs it) with playwright-core's
 * `_electron.launch` inside a private Linux desktop (desktop-session.ts: Xvfb, D-Bus,
 * gnome-keyring, dunst) and a temporary HOME. Pages are found by their app:// address, IPC goes
 * through the real preload, and what Electron offers no API for (the tray's menu, whether the OS
 * showed a notification) is read from main-hooks.cjs. Without an Electron binary, or off Linux, or
 * without a tool a scenario needs, that scenario is skipped with the reason (shown by the verbose
 * reporter). The desktop session itself is checked without Electron, at the end of this file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { keychainAccount } from '../../src-main/core/credentials/credential-store.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { withBuildLock } from '../support/build-lock.ts';
import { runQuiet } from '../support/run-quiet.ts';
import { waitFor } from '../../rigs/wait.ts';
import { hasCommand, startDesktopSession, type DesktopSession } from './support/desktop-session.ts';
import {
  electronForE2E,
  launchScreenpop,
  pageUrl,
  ROOT,
  secondLaunch,
  writeSettings,
  type MenuItemView,
  type RunningApp,
} from './support/screenpop-app.ts';
import { startUpdateFeed, type UpdateFeed } from './support/update-feed.ts';

const electron = electronForE2E();
type Need = 'display' | 'bus' | 'keyring' | 'notifications' | 'wayland';

/** Why this machine cannot run the Electron scenarios at all; null when it can. */
const suiteBlocker: string | null = !electron.ok
  ? electron.reason
  : process.platform !== 'linux'
    ? 'the e2e desktop (Xvfb, D-Bus, gnome-keyring, dunst in a temporary HOME) is Linux-only; on this OS it would use your own keychain and profile'
    : null;

let session: DesktopSession | null = null;
let running: RunningApp | null = null;
let built = false;

beforeAll(async () => {
  if (suiteBlocker) return;
  const result = await withBuildLock(() => runQuiet('npm', ['run', 'build'], ROOT));
  if (result.code !== 0) throw new Error(`npm run build failed:\n${result.output}`);
  built = true;
}, 300_000);

afterEach(async () => {
  await running?.close();
  running = null;
  await session?.stop();
  session = null;
});

/** Skips the scenario, with the reason, unless Electron and the needed desktop parts are here. */
async function desktopOrSkip(ctx: TestContext, needs: Need[]): Promise<DesktopSession> {
  if (suiteBlocker) ctx.skip(suiteBlocker);
  if (!built) ctx.skip('the app was not built');
  session = await startDesktopSession();
  const missing = needs.map((n) => session?.missing[n]).filter(Boolean);
  if (missing.length > 0) ctx.skip(missing.join('; '));
  return session;
}

async function launch(
  s: DesktopSession,
  options: Parameters<typeof launchScreenpop>[2] = {},
): Promise<RunningApp> {
  if (!electron.ok) throw new Error(electron.reason);
  running = await launchScreenpop(s, electron.path, options);
  return running;
}

async function lastMenu(app: RunningApp): Promise<MenuItemView[]> {
  return (await app.menus()).at(-1) ?? [];
}

async function waitForMenu(
  app: RunningApp,
  what: string,
  check: (menu: MenuItemView[]) => boolean,
  timeoutMs = 60_000,
): Promise<MenuItemView[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const menu = await lastMenu(app);
    if (check(menu)) return menu;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for a tray menu ${what}; last: ${JSON.stringify(menu)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const statusLabel = (menu: MenuItemView[]) => menu.find((i) => i.id === 'status')?.label ?? '';
const item = (menu: MenuItemView[], id: string) => menu.find((i) => i.id === id);

/** The demo simulator's address and the extension it rings, from the app's log. */
async function demoService(app: RunningApp): Promise<{ baseUrl: string; extension: string }> {
  const started = await app.waitForLog('demo simulator started');
  return { baseUrl: String(started.baseUrl), extension: String(started.extension) };
}

async function control(
  baseUrl: string,
  route: string,
  body: object,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}/_sim/${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (json.errcode !== 0) throw new Error(`/_sim/${route}: ${JSON.stringify(json)}`);
  return json;
}

/** Every file under a folder (skips what cannot be read). */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

describe('Screenpop in Electron', () => {
  it('first start: the settings window opens on onboarding, the tray says it is not set up', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    const app = await launch(s);
    const settings = await app.page('settings');
    await settings.getByRole('heading', { name: 'Welcome to Screenpop' }).waitFor();
    await settings.getByRole('button', { name: /Connect to my phone system/ }).waitFor();
    await settings.getByRole('button', { name: /Try the demo/ }).waitFor();
    expect(await settings.title()).toBe('Screenpop settings');
    expect(await app.windowState('settings')).toEqual({ visible: true, focused: true });
    // The popup is created hidden at start and loaded once.
    expect(await app.windowState('popup')).toMatchObject({ visible: false });
    const menu = await waitForMenu(app, 'saying it is not set up', (m) =>
      statusLabel(m).startsWith('Needs attention'),
    );
    expect(statusLabel(menu)).toBe('Needs attention: Screenpop is not set up yet.');
    expect(item(menu, 'remedy')?.label).toContain('Open Settings');
    expect(app.problems).toEqual([]);
  });

  it('Try the demo: notifications and the popup appear without taking focus, stack, linger, and Esc dismisses', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus', 'notifications']);
    const app = await launch(s);
    const settings = await app.page('settings');
    await settings.getByRole('button', { name: /Try the demo/ }).click();
    await settings.getByTestId('demo-started').waitFor();
    const demo = await demoService(app);
    await waitForMenu(
      app,
      'saying the demo is connected',
      (m) => statusLabel(m) === 'Demo · Connected',
    );
    expect(await app.focusedPage()).toBe(pageUrl('settings'));

    const first = await control(demo.baseUrl, 'ring', { from: '+14155550123', to: demo.extension });
    const second = await control(demo.baseUrl, 'ring', {
      from: '+442079460958',
      to: demo.extension,
    });
    const popup = await app.page('popup');
    const card = (id: unknown) => popup.locator(`li[data-call-id="${String(id)}"]`);
    await card(first.call_id).waitFor();
    await card(second.call_id).waitFor();
    // Stacked: both cards in the one popup, the newer above.
    const order = await popup
      .locator('li[data-call-id]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-call-id')));
    expect(order.indexOf(String(second.call_id))).toBeLessThan(
      order.indexOf(String(first.call_id)),
    );
    // Shown with showInactive: visible, not focused; the settings window keeps the focus.
    expect(await app.windowState('popup')).toEqual({ visible: true, focused: false });
    expect(await app.focusedPage()).toBe(pageUrl('settings'));
    // The OS notification server (dunst on this session's D-Bus) showed a notification per call.
    let notes = await app.notifications();
    const deadline = Date.now() + 15_000;
    while (notes.filter((n) => n.shown).length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      notes = await app.notifications();
    }
    expect(notes.filter((n) => n.failed)).toEqual([]);
    expect(notes.filter((n) => n.shown).length).toBeGreaterThanOrEqual(2);

    // The first call stops ringing: its card lingers (popupLingerSec, 4 s), then goes.
    await control(demo.baseUrl, 'state', { callId: first.call_id, state: 'ended' });
    await popup
      .locator(`li[data-call-id="${String(first.call_id)}"][data-state="lingering"]`)
      .waitFor();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await card(first.call_id).count()).toBe(1);
    await card(first.call_id).waitFor({ state: 'detached', timeout: 15_000 });
    // Nobody answered it: its ring notification became "Missed call from …" (showMissed), shown
    // by dunst, with no Call back button (the demo's standard service offers no dialling, and
    // Linux notifications show none).
    const missedDeadline = Date.now() + 15_000;
    const missed = () => notes.filter((n) => n.shown && /^Missed call from /.test(n.title));
    while (missed().length < 1 && Date.now() < missedDeadline) {
      await new Promise((r) => setTimeout(r, 200));
      notes = await app.notifications();
    }
    expect(missed().map((n) => n.actions)).toEqual([[]]);

    // Esc on the focused card dismisses it (popup:dismiss through the real preload and handler).
    await card(second.call_id).locator('article').focus();
    await popup.keyboard.press('Escape');
    await card(second.call_id).waitFor({ state: 'detached', timeout: 5_000 });
    expect(await app.focusedPage()).not.toBe(pageUrl('popup'));
    expect(app.problems).toEqual([]);
  });

  it('app:// pages load their module scripts with no CSP violation', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    await writeSettings(s, { demoMode: true });
    const app = await launch(s);
    await demoService(app);
    await app.clickTray('settings');
    await app.clickTray('history');
    for (const name of ['settings', 'history', 'popup'] as const) {
      const page = await app.page(name);
      // Reload under observation, so every script of the page loads while the console is watched.
      await page.reload();
      await page.locator('#root > *').first().waitFor({ state: 'attached' });
      const scripts = await page.locator('script').evaluateAll((els) =>
        els.map((el) => ({
          type: el.getAttribute('type'),
          src: (el as unknown as { src: string }).src,
        })),
      );
      expect(scripts.length, name).toBeGreaterThan(0);
      for (const script of scripts) {
        expect(script.type, name).toBe('module');
        expect(script.src, name).toMatch(/^app:\/\/screenpop\/assets\/.+\.js$/);
      }
      expect(page.url()).toBe(pageUrl(name));
    }
    // The settings page really runs: its form is there (React rendered from the module scripts).
    await (await app.page('settings')).getByRole('button', { name: 'Save' }).waitFor();
    expect(app.problems).toEqual([]);
  });

  it('the tray menu follows the connection: connected, failing with Try again now, paused, Do Not Disturb', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    await writeSettings(s, { demoMode: true });
    const app = await launch(s);
    const demo = await demoService(app);
    let menu = await waitForMenu(
      app,
      'saying the demo is connected',
      (m) => statusLabel(m) === 'Demo · Connected',
    );
    expect(item(menu, 'retry')).toBeUndefined();
    // (A demo call may already have been missed, which adds the "N missed calls" item.) Chromium
    // runs here with --no-sandbox (see README): the app says so, as on Ubuntu 24.04's AppImage.
    expect(menu.filter((i) => i.id && i.id !== 'missed').map((i) => i.id)).toEqual([
      'status',
      'problem-sandbox',
      'recent',
      'dnd',
      'pause',
      'settings',
      'history',
      'diagnostics',
      'quit',
    ]);

    // The service fails every request and drops the stream.
    await control(demo.baseUrl, 'faults/fail-http', { status: 503, count: 100_000, target: 'all' });
    await control(demo.baseUrl, 'faults/close', {});
    menu = await waitForMenu(app, 'offering Try again now', (m) => item(m, 'retry') !== undefined);
    expect(statusLabel(menu)).not.toBe('Demo · Connected');
    expect(item(menu, 'retry')?.label).toBe('Try again now');

    await control(demo.baseUrl, 'faults/fail-http', { status: 503, count: 0, target: 'all' });
    await app.clickTray('retry');
    menu = await waitForMenu(app, 'connected again', (m) => statusLabel(m) === 'Demo · Connected');
    expect(item(menu, 'retry')).toBeUndefined();

    await app.clickTray('pause');
    menu = await waitForMenu(app, 'saying Paused', (m) => statusLabel(m) === 'Demo · Paused');
    expect(item(menu, 'pause')?.label).toBe('Resume');
    await app.clickTray('pause');
    await waitForMenu(app, 'connected after Resume', (m) => statusLabel(m) === 'Demo · Connected');

    await app.clickTray('dnd');
    menu = await waitForMenu(
      app,
      'with Do Not Disturb on',
      (m) => item(m, 'dnd')?.checked === true,
    );
    expect(item(menu, 'dnd')?.type).toBe('checkbox');
  });

  it('as a native Wayland window (Ubuntu GNOME, Fedora) it says the popup cannot be kept in place, and how to start it under XWayland', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus', 'wayland']);
    await writeSettings(s, { demoMode: true });
    const app = await launch(s, {
      env: { ...s.wayland },
      args: ['--ozone-platform=wayland'],
    });
    await demoService(app);
    const menu = await waitForMenu(
      app,
      'saying it runs as a native Wayland window',
      (m) => item(m, 'problem-window-system') !== undefined,
    );
    expect(item(menu, 'problem-window-system')?.label).toMatch(
      /^Screenpop runs as a native Wayland window here/,
    );
    const settings = await (async () => {
      await app.clickTray('settings');
      return app.page('settings');
    })();
    await settings.getByText('--ozone-platform=x11').first().waitFor();
    // The same desktop under XWayland's stand-in (the X display): no such line.
    await app.close();
    running = null;
    const x11 = await launch(s, { args: ['--ozone-platform=x11'] });
    await demoService(x11);
    const plain = await waitForMenu(x11, 'connected', (m) => statusLabel(m) === 'Demo · Connected');
    expect(item(plain, 'problem-window-system')).toBeUndefined();
  });

  it('Settings save puts the API secret in the OS keychain and never in a file', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus', 'keyring']);
    const sim: Simulator = await startSimulator({});
    try {
      const app = await launch(s);
      const settings = await app.page('settings');
      await settings.getByRole('button', { name: /Connect to my phone system/ }).click();
      await settings.getByLabel('Service address').fill(sim.baseUrl);
      await settings.getByLabel('API key', { exact: true }).fill(sim.apiKey.key);
      await settings.getByLabel('API secret').fill(sim.apiKey.secret);
      await settings.getByLabel('Your extensions').fill(sim.extensions[0]?.number ?? '101');
      await settings.getByRole('button', { name: 'Save and connect' }).click();
      await settings.getByRole('heading', { name: 'Settings' }).waitFor();
      await settings.getByTestId('secret-stored').waitFor();
      await waitForMenu(app, 'saying Connected', (m) => statusLabel(m) === 'Connected');

      // In the keychain, under the app's service and the key's account.
      const read = spawnSync(process.execPath, [join(ROOT, 'test/e2e/support/keychain-read.ts')], {
        env: s.env,
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(read.status, read.stderr).toBe(0);
      expect(JSON.parse(read.stdout)).toEqual([
        { account: keychainAccount(sim.apiKey.key, sim.baseUrl), password: sim.apiKey.secret },
      ]);
      // Nowhere on disk: settings, history, logs, Chromium's profile, caches (the whole HOME).
      await app.close();
      running = null;
      const secret = Buffer.from(sim.apiKey.secret);
      const holding: string[] = [];
      for (const file of await filesUnder(s.home)) {
        if (file.includes('/keyrings/')) continue; // the keychain's own encrypted store
        if ((await stat(file)).size > 64 * 1024 * 1024) continue;
        if ((await readFile(file)).includes(secret)) holding.push(file);
      }
      expect(holding).toEqual([]);
      const saved = JSON.parse(
        await readFile(join(app.userData, 'settings.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect(saved).toMatchObject({ baseUrl: sim.baseUrl, apiKey: sim.apiKey.key });
    } finally {
      await sim.close();
    }
  });

  it('a second launch exits and brings the first one’s settings window forward', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    await writeSettings(s, { demoMode: true });
    const app = await launch(s);
    await demoService(app);
    expect(await app.windowState('settings')).toBeNull(); // set up: no window at start
    expect(await secondLaunch(s, app.executable)).toBe(0);
    const settings = await app.page('settings');
    await settings.getByRole('heading', { name: 'Settings' }).waitFor();
    expect(await app.windowState('settings')).toEqual({ visible: true, focused: true });
    // Still the one app: one tray, one demo service.
    expect((await app.log()).filter((r) => r.msg === 'demo simulator started')).toHaveLength(1);
  });

  it('Quit from the tray stops the app cleanly: exit code 0, history saved, demo closed, no error logged', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    await writeSettings(s, { demoMode: true });
    const app = await launch(s);
    const demo = await demoService(app);
    await control(demo.baseUrl, 'ring', { from: '+14155550123', to: demo.extension });
    await app.waitForLog('call ringing');
    const exited = new Promise<number | null>((resolve) =>
      app.app.process().once('exit', (code) => resolve(code)),
    );
    await app.clickTray('quit');
    expect(await exited).toBe(0);
    running = null;
    const history = JSON.parse(
      await readFile(join(app.userData, 'history.json'), 'utf8'),
    ) as unknown;
    expect(JSON.stringify(history)).toContain('+14155550123');
    const log = await app.log();
    expect(log.filter((r) => r.level === 'error')).toEqual([]);
    await expect(fetch(`${demo.baseUrl}/_sim/info`)).rejects.toThrow();
  });

  it('updates: checks the organisation’s HTTPS feed, downloads the newer version, and restarts only when allowed', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    if (!hasCommand('openssl')) ctx.skip('openssl not found (apt-get install openssl)');
    const feed: UpdateFeed = await startUpdateFeed();
    try {
      // The feed's certificate is self-signed for 127.0.0.1: trusted only through the CA file,
      // as the service's would be (updates go out the app's way, not Chromium's).
      await writeSettings(s, {
        updates: { enabled: true, channel: 'latest', feedUrl: feed.url },
        caFile: feed.certFile,
      });
      // electron-updater replaces the running AppImage; a development run names a stand-in.
      const appImage = join(s.home, 'Screenpop-0.1.0.AppImage');
      await writeFile(appImage, 'stand-in for the running AppImage');
      const app = await launch(s, {
        env: { SCREENPOP_DEV_UPDATES: '1', APPIMAGE: appImage },
      });
      const downloaded = await app.waitForLog('update downloaded', 60_000);
      expect(downloaded.version).toBe(feed.version);
      expect(feed.requests).toContain('GET /feed/latest-linux.yml');
      expect(feed.requests).toContain(`GET /feed/Screenpop-${feed.version}.AppImage`);
      // No call has rung: the restart gate allows it at once (a development run only logs it).
      await app.waitForLog(
        'development run: a packaged app would restart now to install the update',
      );
    } finally {
      await feed.close();
    }
  });

  it('updates: with updates turned off the feed is never asked', async (ctx) => {
    const s = await desktopOrSkip(ctx, ['display', 'bus']);
    if (!hasCommand('openssl')) ctx.skip('openssl not found (apt-get install openssl)');
    const feed = await startUpdateFeed();
    try {
      await writeSettings(s, { updates: { enabled: false, channel: 'latest', feedUrl: feed.url } });
      const app = await launch(s, {
        env: { SCREENPOP_DEV_UPDATES: '1' },
        args: ['--ignore-certificate-errors'],
      });
      const off = await app.waitForLog('updates off');
      expect(off.reason).toBe('turned off by the updates setting (updates.enabled)');
      await new Promise((r) => setTimeout(r, 5_000));
      expect(feed.requests).toEqual([]);
    } finally {
      await feed.close();
    }
  });
});

describe('the e2e desktop session (checked without Electron)', () => {
  it('starts a display, a D-Bus session, an unlocked keychain and a notification server, and stops them', async (ctx) => {
    if (process.platform !== 'linux') ctx.skip('the e2e desktop session is Linux-only');
    session = await startDesktopSession();
    const s = session;
    const { display, bus, keyring, notifications } = s.missing;
    const missing = [display, bus, keyring, notifications].filter(Boolean);
    if (missing.length > 0) ctx.skip(missing.join('; '));
    expect(s.env.DISPLAY).toMatch(/^:\d+$/);
    // The Wayland compositor, where weston is installed: its socket is there to connect to.
    if (s.wayland)
      expect(existsSync(join(String(s.env.XDG_RUNTIME_DIR), s.wayland.WAYLAND_DISPLAY))).toBe(true);
    // The keychain the app's keytar talks to: store and read a secret through KeytarCredentialStore.
    const child = spawnSync(
      process.execPath,
      [join(ROOT, 'test/credentials/keytar-child.ts'), 'k3y@127.0.0.1'],
      { env: { ...s.env, SCREENPOP_TEST_SECRET: 'e2e-secret' }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({ afterSet: 'e2e-secret', deleted: true });
    // A notification through libnotify, as Electron sends them, is displayed by the server.
    if (!hasCommand('notify-send'))
      ctx.skip('notify-send not found (apt-get install libnotify-bin)');
    const sent = spawnSync('notify-send', ['Ada Lovelace', 'calling 101'], {
      env: s.env,
      timeout: 10_000,
    });
    expect(sent.status, String(sent.stderr)).toBe(0);
    await waitFor(
      () =>
        spawnSync('dunstctl', ['count', 'displayed'], {
          env: s.env,
          encoding: 'utf8',
        }).stdout.trim() !== '0',
      'dunst to display the notification',
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  });
});
