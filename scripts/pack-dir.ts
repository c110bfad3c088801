/**
 * The packaged app's folder, built exactly as `npm run dist` lays it out, without needing the
 * Electron binary: electron-builder itself (same electron-builder.yml: `files` rules, asar, the
 * native modules' .node files unpacked, production dependencies only, fuses) with `--dir` for
 * Linux, pointed by `electronDist` at an Electron folder. When no real Electron is at hand, the
 * folder is a stand-in: an `electron` file that carries Electron's fuse wire (so electron-builder's fuse step
 * runs and can be checked) and a `version` file, nothing else. What differs from a real
 * `npm run dist` is only what comes from that folder (Chromium's files) and `npmRebuild` (off:
 * keytar and kerberos are N-API modules, the same binary loads in Node and Electron; the
 * installers' rebuild fetches each target's prebuilt binaries, else builds them).
 *
 * Run: npm run pack  (builds first; prints where the folder is and what it weighs)
 *      npm run pack -- --stand-in   (use the stand-in even when a real Electron is found)
 * test/electron/package.test.ts opens the resulting app.asar.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  electronPackageDir,
  electronVersion,
  hostLocateInput,
  locateElectron,
} from './electron-binary.ts';
import { runAttached } from './run-command.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Marks the start of the fuse wire inside Electron's binary (github.com/electron/fuses). */
export const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
/** Fuse order in wire version 1, as electron-builder.yml names them. */
export const FUSE_ORDER = [
  'runAsNode',
  'enableCookieEncryption',
  'enableNodeOptionsEnvironmentVariable',
  'enableNodeCliInspectArguments',
  'enableEmbeddedAsarIntegrityValidation',
  'onlyLoadAppFromAsar',
  'loadBrowserProcessSpecificV8Snapshot',
  'grantFileProtocolExtraPrivileges',
] as const;
/** Electron's own defaults ('1' on, '0' off), what an unflipped binary carries. */
const DEFAULT_WIRE = '10110001';

/** Writes a stand-in Electron folder for Linux: the fuse wire in `electron`, and `version`. */
export async function writeStandInElectron(dir: string, version: string): Promise<string> {
  await mkdir(join(dir, 'locales'), { recursive: true });
  await mkdir(join(dir, 'resources'), { recursive: true });
  const body = Buffer.concat([
    Buffer.from(
      '#!/bin/sh\necho "stand-in Electron: this folder shows the layout, it does not run"\nexit 1\n',
    ),
    Buffer.from(FUSE_SENTINEL, 'ascii'),
    Buffer.from([1, DEFAULT_WIRE.length]),
    Buffer.from(DEFAULT_WIRE, 'ascii'),
  ]);
  await writeFile(join(dir, 'electron'), body, { mode: 0o755 });
  await writeFile(join(dir, 'version'), version);
  await writeFile(join(dir, 'locales', 'en-US.pak'), '');
  return dir;
}

/** The fuses an Electron binary carries: name -> on/off (null: removed or left to Electron). */
export async function readFuses(binary: string): Promise<Record<string, boolean | null>> {
  const bytes = await readFile(binary);
  const at = bytes.indexOf(FUSE_SENTINEL);
  if (at < 0) throw new Error(`${binary} has no fuse wire`);
  const length = bytes[at + FUSE_SENTINEL.length + 1] ?? 0;
  const wire = bytes.subarray(
    at + FUSE_SENTINEL.length + 2,
    at + FUSE_SENTINEL.length + 2 + length,
  );
  const fuses: Record<string, boolean | null> = {};
  FUSE_ORDER.forEach((name, i) => {
    const state = wire[i];
    fuses[name] = state === 0x31 ? true : state === 0x30 ? false : null;
  });
  return fuses;
}

export interface PackedApp {
  /** linux-unpacked/ */
  appDir: string;
  /** linux-unpacked/resources/app.asar */
  asar: string;
  /** linux-unpacked/resources/app.asar.unpacked */
  unpacked: string;
  /** linux-unpacked/screenpop */
  executable: string;
}

/**
 * Runs electron-builder --dir for Linux into `outDir` from the already built dist/. `electronDist`
 * is an unpacked Electron folder (real or stand-in). Output goes to `log` (default: inherited).
 */
export async function packDir(options: {
  outDir: string;
  electronDist: string;
  log?: (chunk: string) => void;
}): Promise<PackedApp> {
  const cli = join(root, 'node_modules', 'electron-builder', 'cli.js');
  const args = [
    cli,
    '--linux',
    '--dir',
    '--publish',
    'never',
    `-c.electronDist=${options.electronDist}`,
    '-c.npmRebuild=false',
    `-c.directories.output=${options.outDir}`,
  ];
  const { log } = options;
  // electron-builder behaves differently when it sees Vitest's variables (hard links instead of
  // copies, no log); the folder must be the one npm run dist makes.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV' && !key.startsWith('VITEST')),
  );
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env,
      stdio: log ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    child.stdout?.on('data', (d: Buffer) => log?.(d.toString()));
    child.stderr?.on('data', (d: Buffer) => log?.(d.toString()));
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`electron-builder --dir exited with ${code}`);
  const appDir = join(options.outDir, 'linux-unpacked');
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name: string };
  return {
    appDir,
    asar: join(appDir, 'resources', 'app.asar'),
    unpacked: join(appDir, 'resources', 'app.asar.unpacked'),
    executable: join(appDir, pkg.name),
  };
}

/** Total bytes of the files under a path (a file's own size for a file). */
export async function sizeOf(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await sizeOf(join(path, entry));
  return total;
}

async function main(): Promise<number> {
  const standIn = process.argv.includes('--stand-in');
  const built = await runAttached('npm', ['run', 'build'], { cwd: root });
  if (built !== 0) return built;
  const located = standIn ? null : locateElectron(hostLocateInput());
  const outDir = join(root, 'release', 'layout');
  let electronDist: string;
  if (located?.ok && process.platform === 'linux') {
    electronDist = dirname(located.binary.path);
  } else {
    electronDist = await writeStandInElectron(
      join(root, '.tmp', 'electron-stand-in'),
      electronVersion(electronPackageDir()),
    );
    process.stderr.write(
      'pack: stand-in Electron (the layout is real; the program in it does not run)\n',
    );
  }
  const packed = await packDir({ outDir, electronDist });
  const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  process.stdout.write(
    `${packed.appDir}\n  app.asar          ${kib(await sizeOf(packed.asar))}\n  app.asar.unpacked ${kib(await sizeOf(packed.unpacked))}\n`,
  );
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`npm run pack failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
