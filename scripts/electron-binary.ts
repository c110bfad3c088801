/**
 * Where the Electron program is, before anything needs it (npm start, npm run dist, the e2e suite),
 * and what to tell a person when it is not there.
 *
 * What Electron 45's npm package does (read in node_modules/electron/*.js): it has no install
 * script, so `npm ci` never downloads anything and ELECTRON_SKIP_BINARY_DOWNLOAD has no effect
 * (no code reads it any more). The first `require('electron')` from Node (which is what the
 * `electron` command and playwright do) looks for `path.txt` + `dist/`, and when they are missing
 * runs `install.js`, which downloads electron-v<version>-<platform>-<arch>.zip with @electron/get
 * (from github.com, or ELECTRON_MIRROR) into its cache and unpacks it into dist/. On a machine
 * without that network it fails with a message that suggests a command that fails the same way.
 * ELECTRON_OVERRIDE_DIST_PATH names a local folder that holds an unpacked Electron instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ElectronBinary {
  /** The executable to spawn. */
  path: string;
  /** Where it came from, for log lines. */
  source: 'ELECTRON_OVERRIDE_DIST_PATH' | 'node_modules/electron/dist';
  /** The folder's `version` file (Electron zips carry one); null when it has none. */
  version: string | null;
}

export type LocateResult =
  { ok: true; binary: ElectronBinary; warning?: string } | { ok: false; missing: string };

export interface LocateInput {
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  arch: string;
  /** node_modules/electron. */
  electronPackageDir: string;
}

/** The executable's path inside an unpacked Electron folder. */
export function executableIn(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron';
  if (platform === 'win32') return 'electron.exe';
  return 'electron';
}

/** The folder that holds the npm package `electron` (it has no binary until its first run). */
export function electronPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('electron/package.json'));
}

export function electronVersion(packageDir: string): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string })
    .version;
}

function folderVersion(folder: string): string | null {
  try {
    return readFileSync(join(folder, 'version'), 'utf8').trim().replace(/^v/, '') || null;
  } catch {
    return null;
  }
}

/** Finds the Electron executable without downloading anything. */
export function locateElectron(input: LocateInput): LocateResult {
  const wanted = electronVersion(input.electronPackageDir);
  const override = input.env.ELECTRON_OVERRIDE_DIST_PATH?.trim();
  if (override) {
    const path = join(override, executableIn(input.platform));
    if (!existsSync(path)) {
      return {
        ok: false,
        missing: `ELECTRON_OVERRIDE_DIST_PATH is set to ${override}, but there is no ${executableIn(input.platform)} in it (expected ${path}).`,
      };
    }
    const version = folderVersion(override);
    const binary: ElectronBinary = { path, source: 'ELECTRON_OVERRIDE_DIST_PATH', version };
    if (version && version !== wanted) {
      return {
        ok: true,
        binary,
        warning: `The Electron in ${override} is ${version}; Screenpop is built and tested with ${wanted}.`,
      };
    }
    return { ok: true, binary };
  }
  const dist = join(input.electronPackageDir, 'dist');
  let relative: string | null;
  try {
    relative = readFileSync(join(input.electronPackageDir, 'path.txt'), 'utf8').trim();
  } catch {
    relative = null;
  }
  const path = join(dist, relative || executableIn(input.platform));
  if (relative && existsSync(path)) {
    return {
      ok: true,
      binary: { path, source: 'node_modules/electron/dist', version: folderVersion(dist) },
    };
  }
  return {
    ok: false,
    missing: `The Electron ${wanted} program for ${input.platform}-${input.arch} is not on this computer yet: npm ci does not download it, and the download Electron makes on its first run has not happened or failed.`,
  };
}

/** The ways to provide Electron, in plain words, for the message printed when it is missing. */
export function waysToProvideElectron(input: Omit<LocateInput, 'env'>): string[] {
  const version = electronVersion(input.electronPackageDir);
  const zip = `electron-v${version}-${input.platform}-${input.arch}.zip`;
  return [
    `With internet access (and ELECTRON_OVERRIDE_DIST_PATH unset): run the command again and Electron downloads itself (about 100 MB, from https://github.com/electron/electron/releases/tag/v${version}); behind a company mirror, set ELECTRON_MIRROR to the mirror's address first.`,
    `Without internet access: copy ${zip} from a connected machine (same release page), unzip it into a folder, and set ELECTRON_OVERRIDE_DIST_PATH=/path/to/that/folder.`,
  ];
}

/** The whole message: what is missing, then the ways to provide it. */
export function explainMissingElectron(
  what: string,
  missing: string,
  input: Omit<LocateInput, 'env'>,
): string {
  return [
    `${what}: Electron is missing.`,
    missing,
    'Ways to provide it:',
    ...waysToProvideElectron(input).map((line, i) => `  ${i + 1}. ${line}`),
    '(ELECTRON_SKIP_BINARY_DOWNLOAD changes nothing for Electron 45: it never downloads at install time.)',
  ].join('\n');
}

/** This machine's inputs for locateElectron. */
export function hostLocateInput(
  env: Record<string, string | undefined> = process.env,
): LocateInput {
  return {
    env,
    platform: process.platform,
    arch: process.arch,
    electronPackageDir: electronPackageDir(),
  };
}
