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
 *    `electronDist` (it must be for the platform being built).
 * 2. The zip is already in Electron's download cache: fine offline.
 * 3. An HTTPS proxy is configured: the download is left to electron-builder (which uses it).
 * 4. Otherwise the download address must answer within 10 s, else the plain-words message.
 */
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
      `  3. Without internet access: unzip ${zip} into a folder and set ELECTRON_OVERRIDE_DIST_PATH=/path/to/that/folder (for the platform you build for), or copy a connected machine's caches (${electronCacheRoots(env, platform).at(-1)} and the electron-builder folder next to it).`,
    ].join('\n'),
  };
}

/** The package.json field that marks an ad-hoc signed macOS build (read by src-main/electron/main.ts). */
export const UNSIGNED_MARK = 'screenpopUnsigned';

/**
 * macOS without a Developer ID certificate in the environment (CSC_LINK or CSC_NAME): electron-builder
 * would not sign at all, but flipping the fuses rewrites the executable, and Apple Silicon kills an
 * executable whose signature no longer matches. So such a build is signed ad hoc ('-'), without the
 * hardened runtime (which would refuse Electron's own frameworks under an ad-hoc signature), and
 * marked, so that the app turns updates off (Squirrel.Mac installs only into signed apps) and says
 * why it shows no notifications (macOS allows them only to signed apps).
 */
export function macSigningArgs(
  env: Env,
  platform: NodeJS.Platform,
  argv: readonly string[],
): { args: string[]; note: string | null } {
  const targets = new Set(
    argv.filter((a) => /^(--mac|--macos|-m|--linux|-l|--win|--windows|-w)$/.test(a)),
  );
  const forMac =
    targets.size === 0
      ? platform === 'darwin'
      : targets.has('--mac') || targets.has('--macos') || targets.has('-m');
  if (!forMac || env.CSC_LINK || env.CSC_NAME) return { args: [], note: null };
  return {
    args: [
      '-c.mac.identity=-',
      '-c.mac.hardenedRuntime=false',
      `-c.extraMetadata.${UNSIGNED_MARK}=true`,
    ],
    note: 'no CSC_LINK or CSC_NAME: the macOS app is signed ad hoc, for testing (it runs on Apple Silicon; Gatekeeper warns on other Macs; no notifications, no self-update)',
  };
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
  const signing = macSigningArgs(process.env, process.platform, process.argv.slice(2));
  if (signing.note) process.stderr.write(`npm run dist: ${signing.note}\n`);
  const built = await runAttached('npm', ['run', 'build'], { cwd: root });
  if (built !== 0) return built;
  const cli = join(root, 'node_modules', 'electron-builder', 'cli.js');
  const builderArgs = [...checked.builderArgs, ...signing.args, ...process.argv.slice(2)];
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
