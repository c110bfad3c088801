/**
 * Installing a downloaded update, in the order that lets the new version come up.
 *
 * electron-updater 6.8's quitAndInstall (BaseUpdater.quitAndInstall, AppImageUpdater.doInstall)
 * first deletes the running AppImage, moves the new one into its folder, starts it, and only on
 * the next turn of the event loop quits the old app. The old one then runs its clean quit (up to
 * 3 s: main.ts's quit sequence) and holds the single-instance lock until it exits, so the new
 * process found the lock taken and ended: after an update the app did not come back. Hence:
 * 1. the clean part of quitting first (stop the connection, write the history: the new process
 *    reads those files), once: the quit that follows finds it done; within the quit sequence's
 *    time limit for an update;
 * 2. an AppImage's autostart entry pointed at the file the update will be in (electron-updater
 *    names it after the download when the current name carries a version, appImageDestination);
 * 3. the single-instance lock released;
 * 4. quitAndInstall, which starts the new version and quits this one.
 * If the installer cannot be started after step 1 (the connection is already stopped), the
 * current version is started again in a new process and this one ends.
 */
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { QUIT_DEADLINE_MS } from '../core/app/quit-sequence.ts';

export interface InstallStepsDeps {
  clock: Clock;
  logger: Logger;
  /** The clean part of quitting (once; the quit sequence's own step). */
  cleanUp: () => Promise<void>;
  /** process.env.APPIMAGE: the AppImage file this process runs from, if any. */
  appImage: string | undefined;
  /** Points the autostart entry (if start at login is on) at this executable. */
  pointAutostartAt: (executable: string) => Promise<void>;
  /** app.releaseSingleInstanceLock */
  releaseLock: () => void;
  /** The updater's quitAndInstall (silent, start the new version after). */
  quitAndInstall: () => void;
  /** Starts the current version again and ends this process (the install failed half-way). */
  restart: () => void;
}

/**
 * Where electron-updater 6.8's AppImageUpdater puts the new AppImage: the current file's path when
 * its name has no version number (or is already the download's name), else the downloaded file's
 * name in the current file's folder. So a file named without a version (`Screenpop.AppImage`)
 * keeps one path for good.
 */
export function appImageDestination(current: string, downloaded: string): string {
  const name = basename(current);
  if (basename(downloaded) === name || !/\d+\.\d+\.\d+/.test(name)) return current;
  return join(dirname(current), basename(downloaded));
}

export async function installInOrder(
  d: InstallStepsDeps,
  downloadedFile: string | null,
): Promise<void> {
  const logger = d.logger.child({ component: 'update-install' });
  // Within the quit sequence's limit for an update: a hung step must not hold the update back.
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = d.clock.setTimeout(() => resolve('late'), QUIT_DEADLINE_MS.update);
  });
  try {
    if ((await Promise.race([d.cleanUp(), late])) === 'late')
      logger.warn('the clean part of quitting did not finish in time; installing anyway', {
        limitMs: QUIT_DEADLINE_MS.update,
      });
  } catch (err) {
    logger.warn('the clean part of quitting failed; installing anyway', { error: err });
  } finally {
    d.clock.clearTimeout(timer);
  }
  if (d.appImage && isAbsolute(d.appImage) && downloadedFile) {
    const next = appImageDestination(d.appImage, downloadedFile);
    try {
      await d.pointAutostartAt(next);
    } catch (err) {
      logger.warn('the autostart entry could not be pointed at the new AppImage', { error: err });
    }
  }
  d.releaseLock();
  try {
    d.quitAndInstall();
  } catch (err) {
    logger.error('the update could not be installed; starting this version again', {
      error: err,
    });
    d.restart();
  }
}
