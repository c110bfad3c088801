/**
 * npm run dist: checks first that electron-builder will find the Electron it puts into every
 * installer, then builds and runs electron-builder (extra arguments pass through:
 * npm run dist -- --linux deb).
 *
 * electron-builder needs electron-v<version>-<platform>-<arch>.zip for each target, and on first use
 * its packaging tools (NSIS, AppImage, fpm...), all from github.com unless mirrors or caches are
 * set up. Without this check an offline machine fails after a long wait with a message naming
 * only a host. The check, in order:
 * 1. ELECTRON_OVERRIDE_DIST_PATH names an unpacked Electron: it is handed to electron-builder as
 *    `electronDist` (it must be for the platform being built). On a Mac it must instead be a
 *    folder holding both Electron zips (Intel and Apple Silicon): the app is universal, and an
 *    unpacked Electron is one architecture, which electron-builder would copy for both halves.
 * 2. The zip is already in Electron's download cache: fine offline.
 * 3. An HTTPS proxy is configured: the download is left to electron-builder (which uses it).
 * 4. Otherwise the download address must answer within 10 s, else the plain-words message.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  electronVersion,
  explainMissingElectron,
  hostLocateInput,
  locateElectron,
  type LocateInput,
} from './electron-binary.ts';
import { runAttached } from './run-command.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const PROBE_TIMEOUT_MS = 10_000;

type Env = Record<string, string | undefined>;

/** Electron's download cache (the one @electron/get and electron-builder read). */
export function electronCacheRoots(env: Env, platform: NodeJS.Platform): string[] {
  const home = homedir();
  const roots = [env.electron_config_cache, env.ELECTRON_CACHE];
  if (platform === 'darwin') roots.push(join(home, 'Library', 'Caches', 'electron'));
  else if (platform === 'win32')
    roots.push(join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'electron', 'Cache'));
  else roots.push(join(env.XDG_CACHE_HOME || join(home, '.cache'), 'electron'));
  return roots.filter((r): r is string => Boolean(r));
}

/** A cached zip: <cache>/<zip> or <cache>/<url hash>/<zip>. */
export function findCachedZip(roots: readonly string[], zip: string): string | null {
  for (const cacheRoot of roots) {
    if (existsSync(join(cacheRoot, zip))) return join(cacheRoot, zip);
    let entries: string[];
    try {
      entries = readdirSync(cacheRoot);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (existsSync(join(cacheRoot, entry, zip))) return join(cacheRoot, entry, zip);
    }
  }
  return null;
}

/** Where @electron/get would download the zip from (ELECTRON_MIRROR honoured). */
export function electronZipUrl(env: Env, version: string, zip: string): string {
  const mirror = env.ELECTRON_MIRROR || 'https://github.com/electron/electron/releases/download/';
  const dir = (env.ELECTRON_CUSTOM_DIR || `v${version}`).replace('{{ version }}', version);
  return `${mirror.endsWith('/') ? mirror : `${mirror}/`}${dir}/${zip}`;
}

export async function probe(url: string, timeoutMs: number): Promise<string | null> {
  try {
    const res = await fetch(url, {
      method: 'HEAD',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status < 400) return null;
    return `${url} answered HTTP ${res.status}.`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    return `${new URL(url).host} could not be reached (${why}).`;
  }
}

export type Preflight =
  { ok: true; builderArgs: string[]; note: string } | { ok: false; message: string };

export async function preflight(
  input: LocateInput,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<Preflight> {
  const { env, platform, arch } = input;
  const version = electronVersion(input.electronPackageDir);
  const zip = `electron-v${version}-${platform}-${arch}.zip`;
  if (env.ELECTRON_OVERRIDE_DIST_PATH && platform === 'darwin') {
    return universalOverride(env.ELECTRON_OVERRIDE_DIST_PATH, version);
  }
  if (env.ELECTRON_OVERRIDE_DIST_PATH) {
    const located = locateElectron(input);
    if (!located.ok) {
      return {
        ok: false,
        message: explainMissingElectron('npm run dist cannot package', located.missing, input),
      };
    }
    const folder = env.ELECTRON_OVERRIDE_DIST_PATH;
    return {
      ok: true,
      builderArgs: [`-c.electronDist=${folder}`],
      note: `using the Electron in ${folder} (ELECTRON_OVERRIDE_DIST_PATH)${located.warning ? `; ${located.warning}` : ''}`,
    };
  }
  // macOS builds one universal app: electron-builder needs both Electron builds, Intel and Apple
  // Silicon, whatever Mac builds it (electron-builder.yml mac.target arch).
  const zips =
    platform === 'darwin'
      ? ['x64', 'arm64'].map((a) => `electron-v${version}-darwin-${a}.zip`)
      : [zip];
  const notes: string[] = [];
  for (const one of zips) {
    const checked = await zipPreflight(env, platform, version, one, timeoutMs);
    if (!checked.ok) return checked;
    notes.push(checked.note);
  }
  return { ok: true, builderArgs: [], note: notes.join('; ') };
}

/**
 * The universal macOS app from a local folder: electron-builder packs the Intel and the Apple
 * Silicon half one after the other, and from a folder `electronDist` it takes each half's
 * `electron-v<version>-darwin-<arch>.zip` when the folder holds it (app-builder-lib's
 * ElectronFramework unpack), else copies the folder itself, one architecture, into both halves.
 * So on a Mac the folder must hold both zips.
 */
function universalOverride(folder: string, version: string): Preflight {
  const zips = ['x64', 'arm64'].map((a) => `electron-v${version}-darwin-${a}.zip`);
  const missing = zips.filter((zip) => !existsSync(join(folder, zip)));
  if (missing.length === 0) {
    return {
      ok: true,
      builderArgs: [`-c.electronDist=${folder}`],
      note: `using ${zips.join(' and ')} in ${folder} (ELECTRON_OVERRIDE_DIST_PATH)`,
    };
  }
  return {
    ok: false,
    message: [
      'npm run dist cannot package: the macOS app is universal (Intel and Apple Silicon in one), so it needs both Electron builds.',
      `ELECTRON_OVERRIDE_DIST_PATH is set to ${folder}, which does not hold ${missing.join(' nor ')}. An unpacked Electron (Electron.app) is one architecture only: electron-builder would put it into both halves of the app.`,
      'Ways to provide them:',
      `  1. Put ${zips.join(' and ')} (as downloaded, not unzipped; https://github.com/electron/electron/releases/tag/v${version}) into ${folder}.`,
      `  2. Or unset ELECTRON_OVERRIDE_DIST_PATH: both zips then come from Electron's download cache (${electronCacheRoots({}, 'darwin').at(-1)}) or are downloaded.`,
    ].join('\n'),
  };
}

async function zipPreflight(
  env: Env,
  platform: NodeJS.Platform,
  version: string,
  zip: string,
  timeoutMs: number,
): Promise<Preflight> {
  const cached = findCachedZip(electronCacheRoots(env, platform), zip);
  if (cached) return { ok: true, builderArgs: [], note: `using the cached ${cached}` };
  if (env.HTTPS_PROXY || env.https_proxy) {
    return { ok: true, builderArgs: [], note: `${zip} will be downloaded through the proxy` };
  }
  const url = electronZipUrl(env, version, zip);
  const problem = await probe(url, timeoutMs);
  if (!problem) return { ok: true, builderArgs: [], note: `${zip} will be downloaded from ${url}` };
  return {
    ok: false,
    message: [
      'npm run dist cannot package: Electron is missing.',
      `electron-builder puts ${zip} into the installers; it is not in the download cache and ${problem}`,
      'On first use electron-builder also downloads its packaging tools (NSIS, AppImage, fpm...) from github.com.',
      'Ways to provide them:',
      '  1. With internet access: run npm run dist again; the downloads are cached for later builds.',
      '  2. Behind company mirrors: set ELECTRON_MIRROR (Electron zips) and ELECTRON_BUILDER_BINARIES_MIRROR (packaging tools).',
      `  3. Without internet access: ${platform === 'darwin' ? `put both macOS zips (electron-v${version}-darwin-x64.zip and electron-v${version}-darwin-arm64.zip: the app is universal) into a folder, not unzipped,` : `unzip ${zip} into a folder`} and set ELECTRON_OVERRIDE_DIST_PATH=/path/to/that/folder (for the platform you build for), or copy a connected machine's caches (${electronCacheRoots(env, platform).at(-1)} and the electron-builder folder next to it).`,
    ].join('\n'),
  };
}

/** The package.json field that marks an ad-hoc signed macOS build (read by src-main/electron/main.ts). */
export const UNSIGNED_MARK = 'screenpopUnsigned';

/** A Developer ID Application identity in the keychain (electron-builder signs with it by itself). */
export const DEVELOPER_ID = 'Developer ID Application:';

/** Notarization credentials electron-builder 26 reads (MacTargetHelper.getNotarizeOptions). */
export function notarizationCredentials(env: Env): string | null {
  if (env.APPLE_ID || env.APPLE_APP_SPECIFIC_PASSWORD || env.APPLE_TEAM_ID)
    return env.APPLE_ID && env.APPLE_APP_SPECIFIC_PASSWORD && env.APPLE_TEAM_ID ? 'Apple ID' : null;
  if (env.APPLE_API_KEY && env.APPLE_API_KEY_ID && env.APPLE_API_ISSUER)
    return 'App Store Connect API key';
  if (env.APPLE_KEYCHAIN_PROFILE) return 'keychain profile';
  return null;
}

/**
 * macOS signing, decided before electron-builder runs.
 * - Signed: CSC_LINK or CSC_NAME, or (electron-builder's own auto-discovery, unless
 *   CSC_IDENTITY_AUTO_DISCOVERY=false) a Developer ID Application identity in the login keychain.
 *   A signed build must be notarized too: electron-builder only warns without credentials, and
 *   Gatekeeper then blocks the app on every other Mac. So the build stops instead, saying what to set.
 * - Unsigned: electron-builder would not sign at all, but flipping the fuses rewrites the
 *   executable, and Apple Silicon kills an executable whose signature no longer matches. So such a
 *   build is signed ad hoc ('-'), without the hardened runtime (which would refuse Electron's own
 *   frameworks under an ad-hoc signature), and marked, so that the app turns updates off
 *   (Squirrel.Mac installs only into signed apps) and says why it shows no notifications (macOS
 *   allows them only to signed apps).
 * `keychainIdentities`: the keychain's code-signing identities (`security find-identity -v -p
 * codesigning`), read only on a Mac building for macOS.
 */
export function macSigningArgs(
  env: Env,
  platform: NodeJS.Platform,
  argv: readonly string[],
  keychainIdentities: readonly string[] = [],
): { args: string[]; note: string | null; error?: string } {
  if (!buildsForMac(platform, argv)) return { args: [], note: null };
  const autoDiscovery = env.CSC_IDENTITY_AUTO_DISCOVERY !== 'false';
  const keychainId = autoDiscovery
    ? keychainIdentities.find((line) => line.includes(DEVELOPER_ID))
    : undefined;
  const signedBy = env.CSC_LINK
    ? 'CSC_LINK'
    : env.CSC_NAME
      ? 'CSC_NAME'
      : keychainId
        ? `the keychain's ${keychainId.slice(keychainId.indexOf(DEVELOPER_ID)).replace(/"$/, '')}`
        : null;
  if (signedBy) {
    const notarizedBy = notarizationCredentials(env);
    if (notarizedBy)
      return { args: [], note: `signed with ${signedBy}, notarized with the ${notarizedBy}` };
    return {
      args: [],
      note: null,
      error: [
        `npm run dist cannot package: the macOS app would be signed (${signedBy}) but not notarized, and Gatekeeper blocks such an app on every other Mac.`,
        'Set notarization credentials:',
        '  APPLE_ID + APPLE_APP_SPECIFIC_PASSWORD + APPLE_TEAM_ID, or',
        '  APPLE_API_KEY (path to the .p8) + APPLE_API_KEY_ID + APPLE_API_ISSUER, or',
        '  APPLE_KEYCHAIN_PROFILE (a notarytool profile in the keychain).',
        'For a test build on this Mac only: CSC_IDENTITY_AUTO_DISCOVERY=false (signed ad hoc) and no CSC_LINK or CSC_NAME.',
      ].join('\n'),
    };
  }
  return {
    args: [
      '-c.mac.identity=-',
      '-c.mac.hardenedRuntime=false',
      `-c.extraMetadata.${UNSIGNED_MARK}=true`,
    ],
    note: 'no Developer ID (CSC_LINK, CSC_NAME or in the keychain): the macOS app is signed ad hoc, for testing (it runs on Apple Silicon; Gatekeeper warns on other Macs; no notifications, no self-update)',
  };
}

function buildsFor(platform: NodeJS.Platform, argv: readonly string[], os: 'mac' | 'win'): boolean {
  const targets = new Set(
    argv.filter((a) => /^(--mac|--macos|-m|--linux|-l|--win|--windows|-w)$/.test(a)),
  );
  if (targets.size === 0) return platform === (os === 'mac' ? 'darwin' : 'win32');
  return os === 'mac'
    ? targets.has('--mac') || targets.has('--macos') || targets.has('-m')
    : targets.has('--win') || targets.has('--windows') || targets.has('-w');
}

const buildsForMac = (platform: NodeJS.Platform, argv: readonly string[]) =>
  buildsFor(platform, argv, 'mac');

/**
 * Windows signing with a key that never leaves a hardware token or a cloud service (certificate
 * authorities no longer issue PFX files for code signing), from the environment like the rest:
 * - WIN_CSC_SHA1 (or WIN_CSC_SUBJECT): a certificate in the Windows certificate store whose key is
 *   on a token (its vendor's driver installed): signtool picks it by thumbprint (or subject);
 * - AZURE_TRUSTED_SIGNING_ENDPOINT + _ACCOUNT + _PROFILE + _PUBLISHER: Azure Trusted Signing
 *   (electron-builder's azureSignOptions; Entra ID credentials in AZURE_TENANT_ID, AZURE_CLIENT_ID,
 *   AZURE_CLIENT_SECRET);
 * - WIN_SIGN_SCRIPT: a module electron-builder calls for each file (signtoolOptions.sign), for
 *   other cloud keys (a KMS or HSM through jsign, a vendor's signing tool).
 * WIN_CSC_LINK / CSC_LINK (a PFX) stay electron-builder's own.
 */
export function windowsSigningArgs(
  env: Env,
  platform: NodeJS.Platform,
  argv: readonly string[],
): { args: string[]; note: string | null; error?: string } {
  if (!buildsFor(platform, argv, 'win')) return { args: [], note: null };
  const azure = [
    env.AZURE_TRUSTED_SIGNING_ENDPOINT,
    env.AZURE_TRUSTED_SIGNING_ACCOUNT,
    env.AZURE_TRUSTED_SIGNING_PROFILE,
    env.AZURE_TRUSTED_SIGNING_PUBLISHER,
  ];
  const ways = [
    env.WIN_CSC_SHA1 || env.WIN_CSC_SUBJECT ? 'token' : null,
    azure.some(Boolean) ? 'azure' : null,
    env.WIN_SIGN_SCRIPT ? 'script' : null,
  ].filter((w): w is string => w !== null);
  if (ways.length > 1)
    return {
      args: [],
      note: null,
      error: `npm run dist cannot package: more than one Windows signing way is set (${ways.join(', ')}); set one.`,
    };
  if (ways[0] === 'token') {
    const arg = env.WIN_CSC_SHA1
      ? `-c.win.signtoolOptions.certificateSha1=${env.WIN_CSC_SHA1}`
      : `-c.win.signtoolOptions.certificateSubjectName=${env.WIN_CSC_SUBJECT}`;
    return { args: [arg], note: 'Windows: signed with the certificate store’s token-held key' };
  }
  if (ways[0] === 'azure') {
    if (!azure.every(Boolean))
      return {
        args: [],
        note: null,
        error:
          'npm run dist cannot package: Azure Trusted Signing needs AZURE_TRUSTED_SIGNING_ENDPOINT, _ACCOUNT, _PROFILE and _PUBLISHER.',
      };
    return {
      args: [
        `-c.win.azureSignOptions.endpoint=${env.AZURE_TRUSTED_SIGNING_ENDPOINT}`,
        `-c.win.azureSignOptions.codeSigningAccountName=${env.AZURE_TRUSTED_SIGNING_ACCOUNT}`,
        `-c.win.azureSignOptions.certificateProfileName=${env.AZURE_TRUSTED_SIGNING_PROFILE}`,
        `-c.win.azureSignOptions.publisherName=${env.AZURE_TRUSTED_SIGNING_PUBLISHER}`,
      ],
      note: 'Windows: signed with Azure Trusted Signing',
    };
  }
  if (ways[0] === 'script')
    return {
      args: [`-c.win.signtoolOptions.sign=${env.WIN_SIGN_SCRIPT}`],
      note: `Windows: signed by ${env.WIN_SIGN_SCRIPT}`,
    };
  return { args: [], note: null };
}

/** The keychain's code-signing identities (macOS only; empty where they cannot be read). */
export function keychainIdentities(): string[] {
  if (process.platform !== 'darwin') return [];
  const found = spawnSync('/usr/bin/security', ['find-identity', '-v', '-p', 'codesigning'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return found.status === 0 ? found.stdout.split('\n') : [];
}

/**
 * keytar is an optional dependency (a checkout without libsecret's development files still
 * installs), but an installer without it could keep no secret: npm run dist stops and says how to
 * get it. Null when it is installed.
 */
export function keytarProblem(projectDir: string): string | null {
  if (existsSync(join(projectDir, 'node_modules', 'keytar', 'package.json'))) return null;
  return [
    'npm run dist cannot package: keytar (the keychain binding the app stores the API secret with) is not installed.',
    'It is an optional dependency that builds from source where no prebuilt binary is reachable:',
    '  Debian, Ubuntu: sudo apt-get install libsecret-1-dev    Fedora: sudo dnf install libsecret-devel',
    '  macOS: xcode-select --install    Windows: Visual Studio Build Tools (Desktop development with C++)',
    'then run npm ci again.',
  ].join('\n');
}

async function main(): Promise<number> {
  const noKeytar = keytarProblem(root);
  if (noKeytar) {
    process.stderr.write(`${noKeytar}\n`);
    return 1;
  }
  const checked = await preflight(hostLocateInput());
  if (!checked.ok) {
    process.stderr.write(`${checked.message}\n`);
    return 1;
  }
  process.stderr.write(`npm run dist: ${checked.note}\n`);
  const argv = process.argv.slice(2);
  const signing = [
    macSigningArgs(
      process.env,
      process.platform,
      argv,
      buildsForMac(process.platform, argv) ? keychainIdentities() : [],
    ),
    windowsSigningArgs(process.env, process.platform, argv),
  ];
  for (const s of signing) {
    if (s.error) {
      process.stderr.write(`${s.error}\n`);
      return 1;
    }
    if (s.note) process.stderr.write(`npm run dist: ${s.note}\n`);
  }
  const built = await runAttached('npm', ['run', 'build'], { cwd: root });
  if (built !== 0) return built;
  const cli = join(root, 'node_modules', 'electron-builder', 'cli.js');
  const builderArgs = [...checked.builderArgs, ...signing.flatMap((s) => s.args), ...argv];
  return runAttached(process.execPath, [cli, ...builderArgs], {
    cwd: root,
    forwardSignals: true,
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`npm run dist failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
