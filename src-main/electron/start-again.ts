/**
 * Starting this app again in a new process: the one way for the XWayland restart
 * (xwayland-relaunch.ts) and for a failed update install (update-install.ts).
 *
 * From an AppImage the new process is the AppImage file ($APPIMAGE), which mounts itself anew.
 * Not `app.relaunch()`: its helper runs from this process's mount and waits for this process to
 * end, which unmounts it, so nothing comes back. Otherwise the same executable and arguments.
 */
import type { SpawnOptions } from 'node:child_process';
import { isAbsolute } from 'node:path';

export interface SelfFacts {
  env: Record<string, string | undefined>;
  /** process.argv */
  argv: readonly string[];
  execPath: string;
}

export interface StartCommand {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
}

/** The command that starts this app again, with `extraArgs` after this process's arguments. */
export function startAgainCommand(
  facts: SelfFacts,
  extraArgs: readonly string[] = [],
  extraEnv: Record<string, string> = {},
): StartCommand {
  const args = [...facts.argv.slice(1), ...extraArgs];
  const env: Record<string, string | undefined> = { ...facts.env, ...extraEnv };
  const appImage = facts.env.APPIMAGE;
  if (appImage && isAbsolute(appImage)) {
    // The AppImage's runtime sets these for the new mount; the old mount goes with this process.
    delete env.APPDIR;
    delete env.APPIMAGE;
    return { command: appImage, args, env };
  }
  return { command: facts.execPath, args, env };
}

export type SpawnDetached = (
  command: string,
  args: readonly string[],
  options: SpawnOptions,
) => { pid?: number | undefined; unref(): void; on(event: 'error', l: () => void): unknown };

/** Starts it, detached, sharing this terminal (if any). Throws when it could not be started. */
export function startDetached(spawn: SpawnDetached, start: StartCommand): void {
  const child = spawn(start.command, start.args, {
    detached: true,
    stdio: 'inherit',
    env: start.env as NodeJS.ProcessEnv,
  });
  child.on('error', () => {});
  // libuv reports a failed exec at once: no pid.
  if (child.pid === undefined) throw new Error(`${start.command} could not be started`);
  child.unref();
}

/**
 * Starts this app again and ends this process: from an AppImage through its file, otherwise with
 * Electron's own app.relaunch(). Ends this process even when the new one could not be started.
 */
export function startAgainAndExit(
  facts: SelfFacts,
  deps: { spawn: SpawnDetached; relaunch: () => void; exit: (code: number) => void },
  onError: (err: unknown) => void,
): void {
  try {
    if (facts.env.APPIMAGE) startDetached(deps.spawn, startAgainCommand(facts));
    else deps.relaunch();
  } catch (err) {
    onError(err);
  }
  deps.exit(0);
}
