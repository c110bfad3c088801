/**
 * macOS, at start: the notification permission asked once, and the app's place on disk.
 *
 * - macOS asks whether an app may show notifications at its first notification. So that the
 *   question comes while the user is looking, not as the first ringing call's banner, the first
 *   start shows one welcome notification: once per user (a mark in the app's data folder), and on
 *   an install provisioned by the organisation's policy too, which never shows onboarding. Not
 *   for an unsigned build (macOS refuses its notifications; the status says so).
 * - Run from the disk image (or Downloads, under App Translocation), the app's path is a volume
 *   that goes away: the login item points at it, and an update cannot replace the app. A packaged
 *   app outside /Applications offers to move itself there (Electron's moveToApplicationsFolder,
 *   which quits and starts the moved app); declined or failed, the status says so with the remedy.
 */
import { access } from 'node:fs/promises';
import { writeFileAtomic } from '../../src-shared/files/atomic-file.ts';
import type { TranslatorSource } from '../../src-shared/i18n/locale-state.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { DesktopHealth, DesktopProblemWords } from '../core/app/desktop-health.ts';

export interface WelcomeOnceDeps {
  platform: NodeJS.Platform;
  unsignedMac: boolean;
  /** The mark that the question was asked (in the app's data folder). */
  markFile: string;
  notifier: { welcome(): void };
  logger: Logger;
  now: () => number;
}

/** Shows the welcome notification unless this user's first start already did. */
export async function welcomeOnce(d: WelcomeOnceDeps): Promise<boolean> {
  if (d.platform !== 'darwin' || d.unsignedMac) return false;
  try {
    await access(d.markFile);
    return false;
  } catch {
    // Not asked yet.
  }
  d.notifier.welcome();
  try {
    await writeFileAtomic(
      d.markFile,
      `${JSON.stringify({ notificationPermissionAskedAt: new Date(d.now()).toISOString() })}\n`,
    );
  } catch (err) {
    d.logger.warn('could not note that notifications were asked for', { error: err });
  }
  return true;
}

export const OUTSIDE_APPLICATIONS_WORDS: DesktopProblemWords = {
  reason: [phrase('desktop.problem.outside-applications.reason')],
  remedy: [phrase('desktop.problem.outside-applications.remedy')],
};

export interface ApplicationsFolderDeps {
  platform: NodeJS.Platform;
  packaged: boolean;
  isInApplicationsFolder: () => boolean;
  /** Electron's: true when moved (the app then quits and the moved one starts). */
  moveToApplicationsFolder: () => boolean;
  /** The user's answer to "Move to the Applications folder?" (a message box). */
  askToMove: (words: {
    message: string;
    detail: string;
    move: string;
    later: string;
  }) => Promise<boolean>;
  words: TranslatorSource;
  health: DesktopHealth;
  logger: Logger;
}

/** askToMove as a native message box (Electron's dialog.showMessageBox). */
export function askWithMessageBox(dialog: {
  showMessageBox(options: {
    type: 'question';
    message: string;
    detail: string;
    buttons: string[];
    defaultId: number;
    cancelId: number;
  }): Promise<{ response: number }>;
}): ApplicationsFolderDeps['askToMove'] {
  return async (words) => {
    const { response } = await dialog.showMessageBox({
      type: 'question',
      message: words.message,
      detail: words.detail,
      buttons: [words.move, words.later],
      defaultId: 0,
      cancelId: 1,
    });
    return response === 0;
  };
}

export type ApplicationsFolderOutcome = 'not-mac' | 'inside' | 'moved' | 'stays';

export async function checkApplicationsFolder(
  d: ApplicationsFolderDeps,
): Promise<ApplicationsFolderOutcome> {
  if (d.platform !== 'darwin' || !d.packaged) return 'not-mac';
  try {
    if (d.isInApplicationsFolder()) return 'inside';
    const t = d.words.current();
    const move = await d.askToMove({
      message: t.t('desktop.move-to-applications.message'),
      detail: t.t('desktop.move-to-applications.detail'),
      move: t.t('desktop.move-to-applications.move'),
      later: t.t('desktop.move-to-applications.later'),
    });
    if (move && d.moveToApplicationsFolder()) return 'moved';
  } catch (err) {
    d.logger.error('could not move Screenpop to the Applications folder', { error: err });
  }
  d.logger.warn('Screenpop runs from outside the Applications folder');
  d.health.report('outside-applications', OUTSIDE_APPLICATIONS_WORDS);
  return 'stays';
}
