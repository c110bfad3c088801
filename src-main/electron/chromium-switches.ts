/**
 * Chromium switches the app sets for itself before 'ready' (app.commandLine.appendSwitch), from
 * facts about the machine, so that it runs where the default would crash:
 * - Linux with a small /dev/shm (containers: Docker gives 64 MiB): Chromium keeps renderer shared
 *   memory there and the renderer crashes when it fills; `--disable-dev-shm-usage` moves it to
 *   /tmp. The switch is copied to every child process Chromium starts after it is set.
 * Never `--no-sandbox`: Chromium's sandbox stays on (README, Install: which Linux package where).
 */
import { statfsSync } from 'node:fs';

/**
 * What every Linux launcher passes (electron-builder.yml linux.executableArgs for the menu entries,
 * login-item.ts for the autostart entry): run under XWayland. As a native Wayland client (Electron
 * 38+ on a Wayland session) the popup cannot be placed in its corner, kept above other windows or
 * shown without focus. Only the command line can choose: Chromium picks the platform before the
 * app's code runs, so appendSwitch would be too late; a launch without it starts itself again with
 * it (xwayland-relaunch.ts).
 */
export const LINUX_LAUNCH_ARGS = ['--ozone-platform=x11'] as const;

/** Below this size /dev/shm is too small for Chromium's renderers (Docker's default is 64 MiB). */
export const MIN_DEV_SHM_BYTES = 512 * 1024 * 1024;

export interface SwitchFacts {
  platform: NodeJS.Platform;
  /** The size of /dev/shm in bytes; null where it cannot be read. */
  devShmBytes: number | null;
}

export interface CommandLineLike {
  appendSwitch(name: string, value?: string): void;
  hasSwitch(name: string): boolean;
}

/** The switches to add, each with why (logged once the log exists). */
export function chromiumSwitches(facts: SwitchFacts): Array<{ name: string; why: string }> {
  const out: Array<{ name: string; why: string }> = [];
  if (
    facts.platform === 'linux' &&
    facts.devShmBytes !== null &&
    facts.devShmBytes < MIN_DEV_SHM_BYTES
  )
    out.push({
      name: 'disable-dev-shm-usage',
      why: `/dev/shm holds ${Math.round(facts.devShmBytes / 1024 / 1024)} MiB, less than Chromium's renderers need`,
    });
  return out;
}

/** Adds the switches not already given on the command line; returns those added. */
export function applyChromiumSwitches(
  commandLine: CommandLineLike,
  facts: SwitchFacts,
): Array<{ name: string; why: string }> {
  const added = chromiumSwitches(facts).filter((s) => !commandLine.hasSwitch(s.name));
  for (const s of added) commandLine.appendSwitch(s.name);
  return added;
}

/** The size of /dev/shm, or null (not Linux, not mounted, not readable). */
export function devShmBytes(platform: NodeJS.Platform): number | null {
  if (platform !== 'linux') return null;
  try {
    const fs = statfsSync('/dev/shm');
    return fs.blocks * fs.bsize;
  } catch {
    return null;
  }
}
