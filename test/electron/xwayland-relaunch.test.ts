/**
 * A packaged Linux app that Chromium made a native Wayland client (no --ozone-platform given: a
 * double-click on the AppImage, `./Screenpop-*.AppImage`, electron-updater's start of the new
 * AppImage) starts itself again under XWayland, from the AppImage file, and ends.
 */
import { describe, expect, it } from 'vitest';
import { fixedTranslator } from '../../src-shared/i18n/locale-state.ts';
import type { Locale } from '../../src-shared/i18n/locales.ts';
import {
  relaunchUnderXWayland,
  XWAYLAND_RELAUNCHED,
  xwaylandRelaunchPlan,
  type LaunchFacts,
} from '../../src-main/electron/xwayland-relaunch.ts';

const commandLine = (switches: Record<string, string>) => ({
  getSwitchValue: (name: string) => switches[name] ?? '',
  hasSwitch: (name: string) => name in switches,
});

const waylandSession = {
  XDG_SESSION_TYPE: 'wayland',
  WAYLAND_DISPLAY: 'wayland-0',
  DISPLAY: ':0',
  APPIMAGE: '/home/ada/Apps/Screenpop-1.2.0.AppImage',
  APPDIR: '/tmp/.mount_ScreenXYZ',
};

/** What electron-updater's start of the new AppImage gives the app: no arguments. */
const facts = (over: Partial<LaunchFacts> = {}): LaunchFacts => ({
  platform: 'linux',
  packaged: true,
  env: waylandSession,
  argv: ['/tmp/.mount_ScreenXYZ/screenpop'],
  // Electron 38+ writes the platform it chose before main.ts runs.
  commandLine: commandLine({ 'ozone-platform': 'wayland' }),
  execPath: '/tmp/.mount_ScreenXYZ/screenpop',
  ...over,
});

function recorder(started = true, locale: Locale = 'en') {
  const pid = started ? 4242 : undefined;
  const spawned: Array<{ command: string; args: readonly string[]; options: unknown }> = [];
  const exits: number[] = [];
  const lines: string[] = [];
  return {
    spawned,
    exits,
    lines,
    deps: {
      spawn: (command: string, args: readonly string[], options: unknown) => {
        spawned.push({ command, args, options });
        return { pid, unref: () => {}, on: () => undefined };
      },
      exit: (code: number) => exits.push(code),
      stderr: (line: string) => lines.push(line),
      words: fixedTranslator(locale, { isolate: false }),
    },
  };
}

describe('relaunchUnderXWayland', () => {
  it('starts the AppImage file again with --ozone-platform=x11 (a new mount), marked, and ends', () => {
    const r = recorder();
    expect(relaunchUnderXWayland(facts({ argv: ['/x/screenpop', '--hidden'] }), r.deps)).toBe(true);
    expect(r.spawned).toHaveLength(1);
    const [call] = r.spawned;
    expect(call!.command).toBe('/home/ada/Apps/Screenpop-1.2.0.AppImage');
    expect(call!.args).toEqual(['--hidden', '--ozone-platform=x11']);
    const options = call!.options as { detached: boolean; env: Record<string, string> };
    expect(options.detached).toBe(true);
    expect(options.env[XWAYLAND_RELAUNCHED]).toBe('1');
    // The old mount's folder must not reach the new AppRun (it would run from a vanishing mount).
    expect(options.env.APPDIR).toBeUndefined();
    expect(r.exits).toEqual([0]);
  });

  it('a deb or rpm installation started without the switch runs its own executable again', () => {
    const env = { XDG_SESSION_TYPE: 'wayland', WAYLAND_DISPLAY: 'wayland-0', DISPLAY: ':0' };
    const plan = xwaylandRelaunchPlan(
      facts({ env, argv: ['/opt/Screenpop/screenpop'], execPath: '/opt/Screenpop/screenpop' }),
    );
    expect(plan).toMatchObject({
      relaunch: true,
      command: '/opt/Screenpop/screenpop',
      args: ['--ozone-platform=x11'],
    });
  });

  it('leaves alone a launch already under X11, a chosen platform, a second start, no XWayland, other OSes and development runs', () => {
    const no = (over: Partial<LaunchFacts>) => xwaylandRelaunchPlan(facts(over)).relaunch;
    expect(no({ commandLine: commandLine({ 'ozone-platform': 'x11' }) })).toBe(false);
    expect(
      no({
        argv: ['/x/screenpop', '--ozone-platform=wayland'],
        commandLine: commandLine({ 'ozone-platform': 'wayland' }),
      }),
    ).toBe(false);
    expect(no({ env: { ...waylandSession, [XWAYLAND_RELAUNCHED]: '1' } })).toBe(false);
    expect(no({ env: { ...waylandSession, DISPLAY: undefined } })).toBe(false);
    expect(no({ platform: 'darwin' })).toBe(false);
    expect(no({ packaged: false })).toBe(false);
    expect(no({ argv: ['/x/screenpop', '--store-secret'] })).toBe(false);
    // The rule of desktop-checks.ts: no platform written, a Wayland session means Wayland.
    expect(no({ commandLine: commandLine({}) })).toBe(true);
  });

  it('the restarted process takes its mark out of its environment: the version an update starts decides afresh', () => {
    const env: Record<string, string | undefined> = {
      ...waylandSession,
      [XWAYLAND_RELAUNCHED]: '1',
    };
    const r = recorder();
    expect(
      relaunchUnderXWayland(
        facts({
          env,
          argv: ['/x/screenpop', '--ozone-platform=x11'],
          commandLine: commandLine({ 'ozone-platform': 'x11' }),
        }),
        r.deps,
      ),
    ).toBe(false);
    expect(env[XWAYLAND_RELAUNCHED]).toBeUndefined();
    // electron-updater starts the new AppImage with this environment and no arguments.
    expect(xwaylandRelaunchPlan(facts({ env })).relaunch).toBe(true);
  });

  it('goes on as it is when the new process cannot be started', () => {
    const r = recorder(false);
    expect(relaunchUnderXWayland(facts(), r.deps)).toBe(false);
    expect(r.exits).toEqual([]);
    expect(r.lines.join('')).toContain('Could not start again under XWayland');
  });

  it('says both terminal lines in the environment’s language, from the catalogues', () => {
    const english = fixedTranslator('en', { isolate: false }).current();
    const german = fixedTranslator('de', { isolate: false }).current();
    const restarted = recorder(true, 'de');
    relaunchUnderXWayland(facts(), restarted.deps);
    expect(restarted.lines).toEqual([`Screenpop: ${german.t('desktop.xwayland.restarting')}\n`]);
    expect(restarted.lines[0]).toContain('XWayland');
    expect(restarted.lines[0]).not.toContain(english.t('desktop.xwayland.restarting'));

    const failed = recorder(false, 'de');
    relaunchUnderXWayland(facts(), failed.deps);
    expect(failed.lines).toHaveLength(1);
    const said = failed.lines[0] ?? '';
    const [before, after] = german
      .t('desktop.xwayland.restart-failed', { error: '\u0000' })
      .split('\u0000');
    expect(said.startsWith(`Screenpop: ${before}`)).toBe(true);
    expect(said.endsWith(`${after}\n`)).toBe(true);
  });
});
