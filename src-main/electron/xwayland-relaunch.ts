/**
 * Every Linux launch runs under XWayland (LINUX_LAUNCH_ARGS), not only those from a menu entry.
 *
 * Chromium picks its window system (Ozone platform) before the app's code runs: Electron 38+ writes
 * `--ozone-platform=wayland` onto its command line on a Wayland session, and appendSwitch from
 * main.ts is too late. The menu and autostart entries pass `--ozone-platform=x11`, but nothing
 * passes it to the AppImage's AppRun (electron-builder's script hands the app only the arguments it
 * was given): a double-click on the file, `./Screenpop-*.AppImage` in a terminal, and
 * electron-updater's start of the new AppImage after an update (it runs the file with no
 * arguments) come up as native Wayland windows. So a packaged app that finds itself a native
 * Wayland client starts itself again with the switch, before it takes the single-instance lock,
 * and ends:
 * from the AppImage file when run from one (start-again.ts), with the same arguments.
 * Not when the user chose a platform (`--ozone-platform` given), when no X server is there to run
 * under (no DISPLAY: XWayland absent), for `--store-secret` (no window), nor twice (the variable
 * below marks the restarted process). Then the status says it is a native Wayland window
 * (desktop-checks.ts), as before.
 */
import type { TranslatorSource } from '../../src-shared/i18n/locale-state.ts';
import { LINUX_LAUNCH_ARGS } from './chromium-switches.ts';
import { nativeWayland } from './desktop-checks.ts';
import {
  startAgainCommand,
  startDetached,
  type SpawnDetached,
  type StartCommand,
} from './start-again.ts';

/** Set in the environment of the process started again, so that it never starts a third. */
export const XWAYLAND_RELAUNCHED = 'SCREENPOP_XWAYLAND_RELAUNCHED';

export interface LaunchFacts {
  platform: NodeJS.Platform;
  packaged: boolean;
  env: Record<string, string | undefined>;
  /** process.argv: what this process was started with (the switches Chromium adds are not in it). */
  argv: readonly string[];
  /** Chromium's command line (app.commandLine), where it wrote the platform it chose. */
  commandLine: { getSwitchValue(name: string): string; hasSwitch(name: string): boolean };
  execPath: string;
}

export type RelaunchPlan = { relaunch: false; why: string } | ({ relaunch: true } & StartCommand);

export function xwaylandRelaunchPlan(facts: LaunchFacts): RelaunchPlan {
  if (facts.platform !== 'linux') return { relaunch: false, why: 'not Linux' };
  if (!facts.packaged) return { relaunch: false, why: 'a development run' };
  if (facts.argv.includes('--store-secret')) return { relaunch: false, why: 'no window' };
  if (facts.argv.some((a) => a === '--ozone-platform' || a.startsWith('--ozone-platform=')))
    return { relaunch: false, why: 'the platform was chosen on the command line' };
  if (facts.env[XWAYLAND_RELAUNCHED]) return { relaunch: false, why: 'already started again' };
  if (!nativeWayland({ platform: facts.platform, env: facts.env, commandLine: facts.commandLine }))
    return { relaunch: false, why: 'not a native Wayland window' };
  if (!facts.env.DISPLAY) return { relaunch: false, why: 'no X server (XWayland) on this session' };
  return {
    relaunch: true,
    ...startAgainCommand(facts, LINUX_LAUNCH_ARGS, { [XWAYLAND_RELAUNCHED]: '1' }),
  };
}

export interface RelaunchDeps {
  spawn: SpawnDetached;
  /** app.exit */
  exit: (code: number) => void;
  stderr: (line: string) => void;
  /** The terminal lines' words, in the environment's language (as --store-secret's). */
  words: TranslatorSource;
}

/**
 * Starts the app again under XWayland when it should (xwaylandRelaunchPlan) and ends this process;
 * returns whether it did. A start that fails (the file gone) leaves this one running as it is.
 * Takes the mark of a restarted process out of `facts.env` (process.env in main.ts).
 */
export function relaunchUnderXWayland(facts: LaunchFacts, deps: RelaunchDeps): boolean {
  const plan = xwaylandRelaunchPlan(facts);
  // The mark is for this process only: one it starts later (electron-updater's new version,
  // app.relaunch) inherits process.env and must decide afresh.
  delete facts.env[XWAYLAND_RELAUNCHED];
  if (!plan.relaunch) return false;
  try {
    startDetached(deps.spawn, plan);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    deps.stderr(
      `Screenpop: ${deps.words.current().t('desktop.xwayland.restart-failed', { error })}\n`,
    );
    return false;
  }
  deps.stderr(`Screenpop: ${deps.words.current().t('desktop.xwayland.restarting')}\n`);
  deps.exit(0);
  return true;
}
