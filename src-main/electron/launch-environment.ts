/**
 * What the tray app reads from its environment and its own files before it composes anything: the
 * developer overrides (SCREENPOP_LANG, SCREENPOP_DEV_URL, SCREENPOP_POLICY_FILE in unpackaged runs
 * only), where start-at-login points (APPIMAGE, XDG_CONFIG_HOME) and the mark of an ad-hoc signed
 * macOS build. main.ts reads this once; the composition (its phases) takes values, never the
 * environment or a file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LaunchEnvironment {
  platform: NodeJS.Platform;
  packaged: boolean;
  /** The app's folder (dist/, assets/ and package.json). */
  root: string;
  userData: string;
  /** SCREENPOP_LANG: a language code (or en-XA) over the OS's and the settings' (developers). */
  devLanguage: string | undefined;
  /** SCREENPOP_DEV_URL: Vite's dev server, honoured by devServerOrigin in unpackaged runs only. */
  devUrl: string | undefined;
  /** SCREENPOP_POLICY_FILE, in unpackaged runs only (tests): the policy read from there. */
  policyFile: string | null;
  /** This process's program (an installer's restarter starts it again). */
  execPath: string;
  /** Windows: %SystemRoot% (where PowerShell is), for the restarter an installer leaves. */
  systemRoot: string | undefined;
  /** The program start-at-login starts (the AppImage, not the mounted copy). */
  executable: string;
  /** Linux: where start-at-login writes its .desktop file. */
  autostartDir: string;
  /** An ad-hoc signed macOS test build (scripts/dist.ts without CSC_LINK). */
  unsignedMac: boolean;
}

export function launchEnvironment(
  env: NodeJS.ProcessEnv,
  app: {
    isPackaged: boolean;
    getAppPath(): string;
    getPath(name: 'userData' | 'home'): string;
  },
  platform: NodeJS.Platform,
  execPath: string,
): LaunchEnvironment {
  const root = app.getAppPath();
  return {
    platform,
    packaged: app.isPackaged,
    root,
    userData: app.getPath('userData'),
    devLanguage: env.SCREENPOP_LANG,
    devUrl: env.SCREENPOP_DEV_URL,
    policyFile: (!app.isPackaged && env.SCREENPOP_POLICY_FILE) || null,
    execPath,
    systemRoot: env.SystemRoot,
    executable: env.APPIMAGE || execPath,
    autostartDir: join(env.XDG_CONFIG_HOME || join(app.getPath('home'), '.config'), 'autostart'),
    unsignedMac: platform === 'darwin' && app.isPackaged && builtUnsigned(root),
  };
}

/** The mark scripts/dist.ts puts in the packaged package.json of an ad-hoc signed macOS build. */
function builtUnsigned(appPath: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(appPath, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    return pkg.screenpopUnsigned === true || pkg.screenpopUnsigned === 'true';
  } catch {
    return false;
  }
}
