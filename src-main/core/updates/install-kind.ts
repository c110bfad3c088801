/**
 * Whether this installation may update itself, from how it was installed. electron-updater can
 * replace an NSIS installation (Windows), an AppImage (Linux) and a signed app (macOS); an MSI,
 * deb or rpm installation is the organisation's or the package manager's to update, and a
 * development run has nothing to replace.
 */
export interface InstallFacts {
  platform: string;
  packaged: boolean;
  /** The APPIMAGE variable the AppImage runtime sets. */
  appImage: string | undefined;
  /** electron-builder's resources/package-type (deb, rpm, pacman), when present. */
  packageType: string | null;
  /** Windows: the NSIS uninstaller exists next to the executable. */
  nsisUninstaller: boolean;
  /** A development run asked to exercise the updater (SCREENPOP_DEV_UPDATES=1, e2e suite). */
  devUpdates: boolean;
}

export type UpdateSupport = { ok: true } | { ok: false; reason: string };

export function updateSupport(facts: InstallFacts): UpdateSupport {
  if (!facts.packaged) {
    return facts.devUpdates
      ? { ok: true }
      : { ok: false, reason: 'a development run does not update itself' };
  }
  if (facts.platform === 'darwin') return { ok: true };
  if (facts.platform === 'win32') {
    return facts.nsisUninstaller
      ? { ok: true }
      : {
          ok: false,
          reason:
            'installed from the MSI (or copied): updates come from your IT department, not from Screenpop',
        };
  }
  if (facts.packageType) {
    return {
      ok: false,
      reason: `installed from a ${facts.packageType} package: updates come through the system's package manager`,
    };
  }
  return facts.appImage
    ? { ok: true }
    : { ok: false, reason: 'not run from the AppImage: nothing Screenpop could replace' };
}
