/**
 * The UpdaterPort on electron-updater (generic HTTPS feed). Created lazily: an installation with
 * updates off never loads electron-updater. The decisions (when to check, when a restart is
 * allowed) are the core's: src-main/core/updates/.
 *
 * - autoDownload on: a newer version downloads in the background; update-downloaded reports it.
 * - autoInstallOnAppQuit off: it installs from Electron's 'quit' event, which main.ts's shutdown
 *   (app.exit after flushing history) never emits; installing is always install() below.
 * - allowDowngrade off (electron-updater turns it on whenever a channel is set).
 * - A development run (SCREENPOP_DEV_UPDATES=1, the e2e suite) checks and downloads for real but
 *   only logs where a packaged app would restart: there is nothing to replace.
 */
import { writeFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import type { AppUpdater, UpdateDownloadedEvent } from 'electron-updater';
import { Emitter } from '../../src-shared/kit/emitter.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { UpdaterPort } from '../core/updates/update-controller.ts';
import { isUpdateRequestExecutor, routeUpdateRequests } from './update-network.ts';

export interface ElectronUpdaterOptions {
  /** Returns electron-updater's autoUpdater (required only when first needed). */
  load: () => AppUpdater;
  logger: Logger;
  /** An unpackaged run asked to exercise the updater. */
  devRun: boolean;
  /**
   * Development run only: where to write the stand-in for resources/app-update.yml, which
   * electron-updater reads for its download cache's name (a packaged app has the real one).
   */
  devConfigFile?: string;
  /**
   * Called just before quitAndInstall: Electron's installer path closes every window first, so a
   * window that refuses to close (the popup) must be let go, or the update never installs.
   */
  beforeInstall?: () => void;
  /**
   * Runs the install: the steps around `quitAndInstall` (which throws when electron-updater said it
   * could not install), given the downloaded file (update-install.ts: clean part, autostart,
   * single-instance lock). Without it quitAndInstall is called at once.
   */
  installInOrder?: (quitAndInstall: () => void, downloadedFile: string | null) => Promise<void>;
  /**
   * The app's way out for a request to this URL (NetTransport.agentFor): the feed and the
   * downloads go through it (update-network.ts) instead of electron-updater's own session.
   */
  agentFor?: (url: URL) => Agent;
}

export function electronUpdaterPort(options: ElectronUpdaterOptions): UpdaterPort {
  const logger = options.logger.child({ component: 'electron-updater' });
  const downloaded = new Emitter<[version: string]>(logger, 'update downloaded');
  let updater: AppUpdater | null = null;
  let downloadedFile: string | null = null;

  const get = (): AppUpdater => {
    if (updater) return updater;
    const u = options.load();
    u.logger = {
      info: (message?: unknown) => logger.debug(String(message)),
      warn: (message?: unknown) => logger.warn(String(message)),
      error: (message?: unknown) => logger.warn(String(message)),
      debug: (message: string) => logger.debug(message),
    };
    u.autoDownload = true;
    u.autoInstallOnAppQuit = false;
    u.forceDevUpdateConfig = options.devRun;
    if (options.agentFor) {
      const executor = (u as unknown as { httpExecutor?: unknown }).httpExecutor;
      if (isUpdateRequestExecutor(executor)) routeUpdateRequests(executor, options.agentFor);
      else
        logger.warn(
          "updates go through electron-updater's own connection (no proxy setting, no CA file): its request executor was not found",
        );
    }
    u.on('update-downloaded', (event: UpdateDownloadedEvent) => {
      downloadedFile = typeof event.downloadedFile === 'string' ? event.downloadedFile : null;
      downloaded.emit(event.version);
    });
    // Without a listener an 'error' event would throw; the failed check is also reported by
    // check()'s promise, which the controller logs.
    u.on('error', (err: Error) => logger.warn('updater error', { error: err }));
    updater = u;
    return u;
  };

  return {
    configure({ url, channel }) {
      const u = get();
      // With no url the feed stays the one in resources/app-update.yml (electron-updater cannot go
      // back to it after a setFeedURL; clearing the setting takes effect at the next start).
      if (url) u.setFeedURL({ provider: 'generic', url, channel });
      u.channel = channel;
      u.allowDowngrade = false;
      if (options.devRun && options.devConfigFile && url) {
        writeFileSync(
          options.devConfigFile,
          `provider: generic\nurl: ${JSON.stringify(url)}\nchannel: ${JSON.stringify(channel)}\nupdaterCacheDirName: screenpop-updater-dev\n`,
        );
        u.updateConfigPath = options.devConfigFile;
      }
    },
    async check() {
      await get().checkForUpdates();
    },
    onDownloaded(listener) {
      return downloaded.on(listener);
    },
    install() {
      if (options.devRun) {
        logger.info('development run: a packaged app would restart now to install the update');
        return;
      }
      const u = get();
      // Silent installer, then start the new version. electron-updater reports a failed start of
      // the installer as an 'error' event, not by throwing.
      const quitAndInstall = () => {
        options.beforeInstall?.();
        let failed: unknown = null;
        const onError = (err: unknown) => (failed ??= err);
        u.on('error', onError);
        try {
          u.quitAndInstall(true, true);
        } finally {
          u.off('error', onError);
        }
        if (failed) throw failed;
      };
      if (!options.installInOrder) return quitAndInstall();
      void options.installInOrder(quitAndInstall, downloadedFile);
    },
  };
}
