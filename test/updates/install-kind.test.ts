/** Which installations may update themselves. */
import { describe, expect, it } from 'vitest';
import { updateSupport, type InstallFacts } from '../../src-main/core/updates/install-kind.ts';

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

  it('skips a development run unless it asks to exercise the updater', () => {
    expect(updateSupport({ ...packaged, packaged: false })).toEqual({
      ok: false,
      reason: 'a development run does not update itself',
    });
    expect(updateSupport({ ...packaged, packaged: false, devUpdates: true })).toEqual({ ok: true });
  });
});
