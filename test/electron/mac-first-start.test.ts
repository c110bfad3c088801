/**
 * macOS: a packaged app run from outside /Applications (its disk image, Downloads) offers to move
 * itself there, and says so in the status when it stays.
 */
import { describe, expect, it } from 'vitest';
import { DesktopHealth } from '../../src-main/core/app/desktop-health.ts';
import {
  askWithMessageBox,
  checkApplicationsFolder,
  type ApplicationsFolderDeps,
} from '../../src-main/electron/mac-first-start.ts';
import { PLAIN_ENGLISH } from '../../src-shared/i18n/locale-state.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { appPlace, dialog, resetElectronMock, app } from '../support/electron-mock.ts';

function deps(extra: Partial<ApplicationsFolderDeps> = {}) {
  const health = new DesktopHealth(silentLogger);
  const d: ApplicationsFolderDeps = {
    platform: 'darwin',
    packaged: true,
    isInApplicationsFolder: () => app.isInApplicationsFolder(),
    moveToApplicationsFolder: () => app.moveToApplicationsFolder(),
    askToMove: askWithMessageBox(dialog),
    words: PLAIN_ENGLISH,
    health,
    logger: silentLogger,
    ...extra,
  };
  return { d, health };
}

describe('the Applications folder (macOS)', () => {
  it('run from the disk image: asks, and moves when the user says so', async () => {
    resetElectronMock();
    appPlace.inApplicationsFolder = false;
    dialog.messageBoxResponse = 0;
    const { d, health } = deps();
    expect(await checkApplicationsFolder(d)).toBe('moved');
    expect(dialog.messageBoxes).toEqual([
      expect.objectContaining({
        message: 'Move Screenpop to the Applications folder?',
        buttons: ['Move to Applications', 'Not now'],
        cancelId: 1,
      }),
    ]);
    expect(appPlace.moves).toBe(1);
    expect(health.has('outside-applications')).toBe(false);
  });

  it('declined, or the move failed: the status says where it runs from and what to do', async () => {
    resetElectronMock();
    appPlace.inApplicationsFolder = false;
    const declined = deps();
    expect(await checkApplicationsFolder(declined.d)).toBe('stays');
    expect(appPlace.moves).toBe(0);
    expect(declined.health.list(PLAIN_ENGLISH.current())).toEqual([
      {
        id: 'outside-applications',
        reason: expect.stringContaining('outside the Applications folder'),
        remedy: 'Quit Screenpop, drag it into the Applications folder, and open it from there.',
      },
    ]);
    dialog.messageBoxResponse = 0;
    const failed = deps({
      moveToApplicationsFolder: () => {
        throw new Error('Failed to copy');
      },
    });
    expect(await checkApplicationsFolder(failed.d)).toBe('stays');
    expect(failed.health.has('outside-applications')).toBe(true);
  });

  it('in /Applications, or not a packaged macOS app: nothing asked', async () => {
    resetElectronMock();
    expect(await checkApplicationsFolder(deps().d)).toBe('inside');
    appPlace.inApplicationsFolder = false;
    expect(await checkApplicationsFolder(deps({ packaged: false }).d)).toBe('not-mac');
    expect(await checkApplicationsFolder(deps({ platform: 'win32' }).d)).toBe('not-mac');
    expect(dialog.messageBoxes).toEqual([]);
  });
});
