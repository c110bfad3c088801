/**
 * Whether this installation may update itself, from how it was installed. electron-updater can
 * replace a per-user NSIS installation (Windows), an AppImage (Linux) and a signed app (macOS); an
 * MSI, deb or rpm installation is the organisation's or the package manager's to update, and a
 * development run has nothing to replace. Two that it could replace, but must not:
 * - an NSIS installation for all users (in Program Files or any folder the installer was given: it
 *   says which in resources/install-scope): the update runs the installer elevated,
 *   so a UAC prompt comes up between calls after electron-updater has already quit the app; a
 *   standard user cannot answer it, and cancelling leaves Screenpop gone (at every start). Like an
 *   MSI, its updates are IT's.
 * - a macOS build without a Developer ID signature (ad-hoc signed, `npm run dist` without
 *   CSC_LINK): Squirrel.Mac refuses to install an update into an unsigned app.
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
  /** Windows: installed for all users (the executable is under Program Files). */
  perMachine?: boolean;
  /** macOS: the build carries a Developer ID signature (false: ad-hoc, `npm run dist` without CSC_LINK). */
  signed?: boolean;
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
  if (facts.platform === 'darwin') {
    return facts.signed === false
      ? {
          ok: false,
          reason:
            'an unsigned (ad-hoc signed) test build: macOS installs updates only into signed apps',
        }
      : { ok: true };
  }
  if (facts.platform === 'win32') {
    if (!facts.nsisUninstaller)
      return {
        ok: false,
        reason:
          'installed from the MSI (or copied): updates come from your IT department, not from Screenpop',
      };
    return facts.perMachine
      ? {
          ok: false,
          reason:
            'installed for all users (Program Files): updates come from your IT department, as they would ask for administrator rights between calls',
        }
      : { ok: true };
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

/** Windows: whether the executable lies under a Program Files folder (an install for all users). */
export function isPerMachinePath(
  execPath: string,
  env: Record<string, string | undefined>,
): boolean {
  const exe = execPath.toLowerCase().replace(/\//g, '\\');
  return [env.ProgramFiles, env.ProgramW6432, env['ProgramFiles(x86)']].some((dir) => {
    if (!dir) return false;
    const root = dir.toLowerCase().replace(/\//g, '\\').replace(/\\+$/, '');
    return exe.startsWith(`${root}\\`);
  });
}

/**
 * Windows: the file assets/installer.nsh writes into the installation's resources folder, saying
 * whether the NSIS installer ran for all users (`all-users`: elevated, whatever the folder, e.g.
 * D:\Apps) or for this user (`per-user`). The installer knows; a path prefix only guesses.
 */
export const INSTALL_SCOPE_FILE = 'install-scope';

export type InstallScope = 'all-users' | 'per-user';

/** The install-scope file's text, or null when absent or not one the installer writes. */
export function parseInstallScope(text: string | null): InstallScope | null {
  const scope = text?.trim();
  return scope === 'all-users' || scope === 'per-user' ? scope : null;
}

/**
 * Windows: installed for all users. What the installer wrote decides; an installation made by
 * an installer older than that file (or copied by hand) is judged by its path (Program Files).
 */
export function isPerMachineInstall(
  scope: InstallScope | null,
  execPath: string,
  env: Record<string, string | undefined>,
): boolean {
  if (scope) return scope === 'all-users';
  return isPerMachinePath(execPath, env);
}
