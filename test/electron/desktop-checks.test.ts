/**
 * The Linux desktop checks at start: the sandbox off, a native Wayland window, no tray host on
 * GNOME. The tray host is asked of a real D-Bus session bus (dbus-daemon, started here) through
 * dbus-send, as the app asks it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DesktopHealth } from '../../src-main/core/app/desktop-health.ts';
import {
  checkDesktop,
  isGnome,
  nativeWayland,
  runProbe,
  storeSecretNeedsDisplay,
  trayHost,
  type DesktopFacts,
} from '../../src-main/electron/desktop-checks.ts';
import { PLAIN_ENGLISH } from '../../src-shared/i18n/locale-state.ts';
import { silentLogger } from '../../src-shared/process/log.ts';

function facts(
  switches: Record<string, string> = {},
  env: Record<string, string> = {},
  platform: NodeJS.Platform = 'linux',
): DesktopFacts {
  return {
    platform,
    env,
    commandLine: {
      hasSwitch: (name) => name in switches,
      getSwitchValue: (name) => switches[name] ?? '',
    },
  };
}

const says = (health: DesktopHealth) =>
  Object.fromEntries(health.list(PLAIN_ENGLISH.current()).map((p) => [p.id, p]));

describe('the Linux desktop checks', () => {
  it('say when Chromium runs without its sandbox (the AppImage on Ubuntu 24.04+), and what to install', async () => {
    const health = new DesktopHealth(silentLogger);
    await checkDesktop(facts({ 'no-sandbox': '' }), health, silentLogger);
    expect(says(health).sandbox).toEqual({
      id: 'sandbox',
      reason: expect.stringContaining("without Chromium's sandbox"),
      remedy: expect.stringContaining('.deb package (Debian, Ubuntu)'),
    });
    const fine = new DesktopHealth(silentLogger);
    await checkDesktop(facts({ 'no-sandbox': '' }, {}, 'darwin'), fine, silentLogger);
    expect(fine.list(PLAIN_ENGLISH.current())).toEqual([]);
  });

  it('tell a native Wayland window from XWayland by the platform Chromium chose', () => {
    const wayland = { XDG_SESSION_TYPE: 'wayland', WAYLAND_DISPLAY: 'wayland-0' };
    expect(nativeWayland(facts({ 'ozone-platform': 'wayland' }))).toBe(true);
    expect(nativeWayland(facts({ 'ozone-platform': 'x11' }, wayland))).toBe(false);
    expect(nativeWayland(facts({}, wayland))).toBe(true);
    expect(nativeWayland(facts({ 'ozone-platform-hint': 'x11' }, wayland))).toBe(false);
    expect(nativeWayland(facts({}, { XDG_SESSION_TYPE: 'x11', DISPLAY: ':0' }))).toBe(false);
    expect(nativeWayland(facts({ 'ozone-platform': 'wayland' }, {}, 'win32'))).toBe(false);
  });

  it('on GNOME without a tray host: says so and asks for the Settings window; elsewhere asks nothing', async () => {
    const absent = async () =>
      'method return time=1 sender=org.freedesktop.DBus\n   boolean false\n';
    const health = new DesktopHealth(silentLogger);
    const gnome = await checkDesktop(
      facts({}, { XDG_CURRENT_DESKTOP: 'ubuntu:GNOME' }),
      health,
      silentLogger,
      absent,
    );
    expect(gnome.trayHidden).toBe(true);
    expect(says(health).tray?.remedy).toContain('gnome-shell-extension-appindicator');
    let asked = 0;
    const kde = await checkDesktop(
      facts({}, { XDG_CURRENT_DESKTOP: 'KDE' }),
      health,
      silentLogger,
      async () => {
        asked++;
        return null;
      },
    );
    expect(kde.trayHidden).toBe(false);
    expect(asked).toBe(0);
    expect(isGnome({ XDG_CURRENT_DESKTOP: 'GNOME-Classic:GNOME' })).toBe(true);
    expect(isGnome({ XDG_CURRENT_DESKTOP: 'XFCE' })).toBe(false);
    expect(await trayHost(async () => null)).toBe('unknown');
  });

  it('asks a real session bus whether a StatusNotifierWatcher is there (none on a bare bus)', async (ctx) => {
    if (spawnSync('sh', ['-c', 'command -v dbus-daemon && command -v dbus-send']).status !== 0)
      ctx.skip('dbus-daemon or dbus-send not found (apt-get install dbus)');
    const bus = spawn(
      'dbus-daemon',
      ['--session', '--nofork', '--nopidfile', '--print-address=1'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    try {
      const address = await new Promise<string>((resolve, reject) => {
        let text = '';
        bus.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          if (text.includes('\n')) resolve(text.trim());
        });
        bus.on('exit', () => reject(new Error('dbus-daemon ended')));
      });
      const before = process.env.DBUS_SESSION_BUS_ADDRESS;
      process.env.DBUS_SESSION_BUS_ADDRESS = address;
      try {
        expect(await trayHost(runProbe)).toBe('absent');
      } finally {
        if (before === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS;
        else process.env.DBUS_SESSION_BUS_ADDRESS = before;
      }
    } finally {
      bus.kill('SIGTERM');
    }
  });

  it('--store-secret on Linux without a display is stopped before Chromium fails, unless headless', () => {
    expect(storeSecretNeedsDisplay('linux', {}, ['--store-secret'])).toBe(true);
    expect(storeSecretNeedsDisplay('linux', { DISPLAY: ':0' }, ['--store-secret'])).toBe(false);
    expect(storeSecretNeedsDisplay('linux', { WAYLAND_DISPLAY: 'wayland-0' }, [])).toBe(false);
    expect(
      storeSecretNeedsDisplay('linux', {}, ['--store-secret', '--ozone-platform=headless']),
    ).toBe(false);
    expect(storeSecretNeedsDisplay('darwin', {}, ['--store-secret'])).toBe(false);
  });
});
