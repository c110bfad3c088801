/**
 * What a Linux desktop does to the app that the user should know about, checked once at start and
 * said in the status (DesktopHealth: the tray line and Settings) with the remedy:
 * - the sandbox is off (`--no-sandbox`: electron-builder's AppImage launcher adds it where user
 *   namespaces are restricted, Ubuntu 24.04+): use the deb or rpm;
 * - a native Wayland window (Electron 38+ picks Wayland on a Wayland session unless started with
 *   `--ozone-platform=x11`, as the menu entries do): the popup cannot be kept in its corner, above
 *   other windows, or away from the keyboard focus;
 * - no tray host on GNOME (no StatusNotifierWatcher on the session bus: the AppIndicator extension
 *   is missing or off; GNOME has no other tray): the icon and its menu are invisible, so the
 *   Settings window opens at each start.
 */
import { spawn } from 'node:child_process';
import type { DesktopHealth, DesktopProblemWords } from '../core/app/desktop-health.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import type { Logger } from '../../src-shared/process/log.ts';

export interface DesktopFacts {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  /** Chromium's command line (app.commandLine). */
  commandLine: { hasSwitch(name: string): boolean; getSwitchValue(name: string): string };
}

export const SANDBOX_OFF_WORDS: DesktopProblemWords = {
  reason: [phrase('desktop.problem.sandbox.reason')],
  remedy: [phrase('desktop.problem.sandbox.remedy')],
};

export const NATIVE_WAYLAND_WORDS: DesktopProblemWords = {
  reason: [phrase('desktop.problem.wayland.reason')],
  remedy: [phrase('desktop.problem.wayland.remedy')],
};

export const NO_TRAY_WORDS: DesktopProblemWords = {
  reason: [phrase('desktop.problem.tray.reason')],
  remedy: [phrase('desktop.problem.tray.remedy')],
};

/** Chromium runs without its sandbox. */
export function sandboxOff(facts: DesktopFacts): boolean {
  return facts.platform === 'linux' && facts.commandLine.hasSwitch('no-sandbox');
}

/**
 * The app is a native Wayland client. Chromium writes the platform it chose into its command line
 * (`--ozone-platform`) before the app's code runs; where it did not, a Wayland session means
 * Wayland (Electron 38+ default).
 */
export function nativeWayland(facts: DesktopFacts): boolean {
  if (facts.platform !== 'linux') return false;
  const chosen = facts.commandLine.getSwitchValue('ozone-platform');
  if (chosen) return chosen === 'wayland';
  const hint = facts.commandLine.getSwitchValue('ozone-platform-hint');
  if (hint === 'x11') return false;
  return facts.env.XDG_SESSION_TYPE === 'wayland' && Boolean(facts.env.WAYLAND_DISPLAY);
}

/** A GNOME session, where only the AppIndicator extension shows tray icons. */
export function isGnome(env: Record<string, string | undefined>): boolean {
  return (env.XDG_CURRENT_DESKTOP ?? '')
    .split(':')
    .some((d) => d.toUpperCase() === 'GNOME' || d.toUpperCase() === 'UBUNTU');
}

export type Probe = (command: string, args: string[], timeoutMs: number) => Promise<string | null>;

/** Runs a command and resolves its standard output, or null (missing, failed, too slow). */
export const runProbe: Probe = (command, args, timeoutMs) =>
  new Promise((resolve) => {
    let out = '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      resolve(null);
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, timeoutMs);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? out : null);
    });
  });

/**
 * Whether a StatusNotifierItem host is on the session bus: 'present', 'absent', or 'unknown'
 * (no dbus-send, no bus). Asked of D-Bus itself with dbus-send (package dbus).
 */
export async function trayHost(probe: Probe = runProbe): Promise<'present' | 'absent' | 'unknown'> {
  const answer = await probe(
    'dbus-send',
    [
      '--session',
      '--print-reply',
      '--dest=org.freedesktop.DBus',
      '/org/freedesktop/DBus',
      'org.freedesktop.DBus.NameHasOwner',
      'string:org.kde.StatusNotifierWatcher',
    ],
    2_000,
  );
  if (answer === null) return 'unknown';
  if (/boolean true/.test(answer)) return 'present';
  if (/boolean false/.test(answer)) return 'absent';
  return 'unknown';
}

/**
 * Checks the desktop and reports what it finds to `health`. Resolves whether the tray cannot be
 * seen (the caller then opens the Settings window, the one way left to reach the app).
 */
export async function checkDesktop(
  facts: DesktopFacts,
  health: DesktopHealth,
  logger: Logger,
  probe: Probe = runProbe,
): Promise<{ trayHidden: boolean }> {
  if (facts.platform !== 'linux') return { trayHidden: false };
  if (sandboxOff(facts)) health.report('sandbox', SANDBOX_OFF_WORDS);
  if (nativeWayland(facts)) health.report('window-system', NATIVE_WAYLAND_WORDS);
  let trayHidden = false;
  if (isGnome(facts.env)) {
    const host = await trayHost(probe);
    logger.info('tray host', { host, desktop: facts.env.XDG_CURRENT_DESKTOP });
    if (host === 'absent') {
      trayHidden = true;
      health.report('tray', NO_TRAY_WORDS);
    }
  }
  return { trayHidden };
}

/**
 * `Screenpop --store-secret` on Linux with no display: Chromium needs one to start unless told to
 * use its headless platform, so an administrator's script over ssh would fail with Chromium's own
 * "Missing X server or $DISPLAY". True when that is the case (the caller says what to do instead).
 */
export function storeSecretNeedsDisplay(
  platform: NodeJS.Platform,
  env: Record<string, string | undefined>,
  argv: readonly string[],
): boolean {
  if (platform !== 'linux' || env.DISPLAY || env.WAYLAND_DISPLAY) return false;
  return !argv.includes('--ozone-platform=headless');
}
