/** Which installations may update themselves. */
import { describe, expect, it } from 'vitest';
import {
  isPerMachineInstall,
  isPerMachinePath,
  parseInstallScope,
  updateSupport,
  type InstallFacts,
} from '../../src-main/core/updates/install-kind.ts';

const packaged: InstallFacts = {
  platform: 'linux',
  packaged: true,
  appImage: undefined,
  packageType: null,
  nsisUninstaller: false,
  devUpdates: false,
};

describe('updateSupport', () => {
  it('updates an AppImage, an NSIS installation and a macOS app', () => {
    expect(updateSupport({ ...packaged, appImage: '/home/me/Screenpop-1.0.0.AppImage' })).toEqual({
      ok: true,
    });
    expect(updateSupport({ ...packaged, platform: 'win32', nsisUninstaller: true })).toEqual({
      ok: true,
    });
    expect(updateSupport({ ...packaged, platform: 'darwin' })).toEqual({ ok: true });
  });

  it('leaves MSI, deb and rpm installations to the organisation or package manager', () => {
    expect(updateSupport({ ...packaged, platform: 'win32' })).toEqual({
      ok: false,
      reason: expect.stringContaining('MSI'),
    });
    expect(updateSupport({ ...packaged, packageType: 'rpm', appImage: undefined })).toEqual({
      ok: false,
      reason: expect.stringContaining('rpm package'),
    });
    expect(updateSupport(packaged)).toMatchObject({ ok: false });
  });

  it('leaves an NSIS installation for all users to IT (the update would ask for admin rights between calls)', () => {
    expect(
      updateSupport({ ...packaged, platform: 'win32', nsisUninstaller: true, perMachine: true }),
    ).toEqual({ ok: false, reason: expect.stringContaining('installed for all users') });
    expect(
      updateSupport({ ...packaged, platform: 'win32', nsisUninstaller: true, perMachine: false }),
    ).toEqual({ ok: true });
    const env = {
      ProgramFiles: 'C:\\Program Files',
      'ProgramFiles(x86)': 'C:\\Program Files (x86)',
      LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local',
    };
    expect(isPerMachinePath('C:\\Program Files\\Screenpop\\Screenpop.exe', env)).toBe(true);
    expect(isPerMachinePath('c:\\program files (x86)\\Screenpop\\Screenpop.exe', env)).toBe(true);
    expect(
      isPerMachinePath('C:\\Users\\ada\\AppData\\Local\\Programs\\screenpop\\Screenpop.exe', env),
    ).toBe(false);
    expect(isPerMachinePath('C:\\Program Files Extra\\Screenpop.exe', env)).toBe(false);
  });

  it('decides "for all users" from what the installer wrote, not from the folder (D:\\Apps)', () => {
    const env = {
      ProgramFiles: 'C:\\Program Files',
      LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local',
    };
    const elsewhere = 'D:\\Apps\\Screenpop\\Screenpop.exe';
    // The folder alone says "this user": an elevated update would then come up between calls.
    expect(isPerMachinePath(elsewhere, env)).toBe(false);
    expect(isPerMachineInstall(parseInstallScope('all-users\r\n'), elsewhere, env)).toBe(true);
    expect(
      isPerMachineInstall(
        parseInstallScope('per-user'),
        'C:\\Program Files\\Screenpop\\Screenpop.exe',
        env,
      ),
    ).toBe(false);
    // An installation from an installer that wrote no such file: its path decides, as before.
    expect(
      isPerMachineInstall(
        parseInstallScope(null),
        'C:\\Program Files\\Screenpop\\Screenpop.exe',
        env,
      ),
    ).toBe(true);
    expect(isPerMachineInstall(parseInstallScope('nonsense'), elsewhere, env)).toBe(false);
  });

  it('does not offer updates to an unsigned macOS build (Squirrel.Mac refuses them)', () => {
    expect(updateSupport({ ...packaged, platform: 'darwin', signed: false })).toEqual({
      ok: false,
      reason: expect.stringContaining('unsigned'),
    });
    expect(updateSupport({ ...packaged, platform: 'darwin', signed: true })).toEqual({ ok: true });
  });

  it('skips a development run unless it asks to exercise the updater', () => {
    expect(updateSupport({ ...packaged, packaged: false })).toEqual({
      ok: false,
      reason: 'a development run does not update itself',
    });
    expect(updateSupport({ ...packaged, packaged: false, devUpdates: true })).toEqual({ ok: true });
  });
});
