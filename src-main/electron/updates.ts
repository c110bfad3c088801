/**
 * The app's updates, wired: decided in the core (never restart while a call rings or just after:
 * core/updates/), carried out by electron-updater (updater.ts). What kind of install this is
 * (AppImage, deb/rpm, per-machine NSIS, unsigned macOS) decides whether the app updates itself.
 * SCREENPOP_DEV_UPDATES=1 exercises it in an unpackaged run (e2e suite). A side job of main.ts.
 */
import { app } from 'electron';
import electronUpdater from 'electron-updater';
import { existsSync, readFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { dirname, join } from 'node:path';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { CallPresenter } from '../core/presenters/call-presenter.ts';
import {
  INSTALL_SCOPE_FILE,
  isPerMachineInstall,
  parseInstallScope,
  updateSupport,
} from '../core/updates/install-kind.ts';
import { RestartGate } from '../core/updates/restart-gate.ts';
import { UpdateController } from '../core/updates/update-controller.ts';
import { installInOrder, type InstallStepsDeps } from './update-install.ts';
import { electronUpdaterPort } from './updater.ts';

export interface AppUpdatesDeps {
  clock: Clock;
  logger: Logger;
  /** Whose ringing cards hold a restart back. */
  presenter: Pick<CallPresenter, 'onCardsChange'>;
  /** Released before the installer runs (it would hold the app open). */
  popup: { release(): void };
  userData: string;
  unsignedMac: boolean;
  /** The app's way out (NetTransport.agentFor of the settings in force): proxy, credentials, CAs. */
  agentFor: (url: URL) => Agent;
  /** What installing needs of the app around quitAndInstall (update-install.ts). */
  install: Pick<InstallStepsDeps, 'cleanUp' | 'pointAutostartAt' | 'releaseLock' | 'restart'>;
}

export function appUpdates(d: AppUpdatesDeps): UpdateController {
  const devUpdates = !app.isPackaged && process.env.SCREENPOP_DEV_UPDATES === '1';
  const gate = new RestartGate({ clock: d.clock, logger: d.logger });
  d.presenter.onCardsChange((cards) =>
    gate.setRinging(cards.filter((c) => c.state === 'ringing').map((c) => c.callId)),
  );
  return new UpdateController({
    clock: d.clock,
    logger: d.logger,
    gate,
    support: updateSupport({
      platform: process.platform,
      packaged: app.isPackaged,
      appImage: process.env.APPIMAGE,
      packageType: packageType(process.resourcesPath),
      nsisUninstaller: existsSync(
        join(dirname(process.execPath), `Uninstall ${app.getName()}.exe`),
      ),
      perMachine:
        process.platform === 'win32' &&
        isPerMachineInstall(
          parseInstallScope(resourceText(process.resourcesPath, INSTALL_SCOPE_FILE)),
          process.execPath,
          process.env,
        ),
      signed: !d.unsignedMac,
      devUpdates,
    }),
    port: electronUpdaterPort({
      load: () => electronUpdater.autoUpdater,
      logger: d.logger,
      devRun: devUpdates,
      devConfigFile: join(d.userData, 'dev-app-update.yml'),
      beforeInstall: () => d.popup.release(),
      agentFor: d.agentFor,
      installInOrder: (quitAndInstall, downloadedFile) =>
        installInOrder(
          {
            ...d.install,
            clock: d.clock,
            logger: d.logger,
            appImage: process.env.APPIMAGE,
            quitAndInstall,
          },
          downloadedFile,
        ),
    }),
    // A development run exercising the updater checks at once instead of after a minute.
    ...(devUpdates ? { firstCheckMs: 1000 } : {}),
  });
}

/** electron-builder's resources/package-type (deb, rpm, pacman) when installed from such a package. */
function packageType(resourcesPath: string | undefined): string | null {
  return resourceText(resourcesPath, 'package-type')?.trim() || null;
}

/** A small file an installer wrote into resources/, or null. */
function resourceText(resourcesPath: string | undefined, name: string): string | null {
  if (!resourcesPath) return null;
  try {
    return readFileSync(join(resourcesPath, name), 'utf8');
  } catch {
    return null;
  }
}
