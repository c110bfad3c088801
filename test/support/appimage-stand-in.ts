/**
 * electron-builder's own AppImage target, run on an already packed folder (`prepackaged`) with
 * stand-in AppImage tools (APPIMAGE_TOOLS_PATH, the variable electron-builder reads for an
 * offline toolset): the runtime is a marker file, and `mksquashfs` keeps a copy of the AppDir it
 * was given (and its arguments) instead of compressing it. So what electron-builder puts into the
 * AppImage (AppRun, the .desktop file, the app) and which runtime it chose can be read without the
 * real tools (a download from github.com, not possible here). The tools folder has only the
 * static runtime's layout (`runtimes/runtime-x64`, `mksquashfs` at its root): electron-builder's
 * legacy FUSE 2 toolset looks for `runtime-x64` and `linux-x64/mksquashfs` instead and fails.
 *
 * Run as a child process (electron-builder changes its ways under Vitest):
 *   node test/support/appimage-stand-in.ts <packed linux-unpacked folder> <scratch folder>
 * Prints, after APPIMAGE_MARK, JSON: { appDir, mksquashfsArgs, artifact, runtimeHead }.
 */
import { chmodSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const APPIMAGE_MARK = '@@appimage-stand-in@@';
/** What the stand-in runtime holds; the built AppImage starts with it. */
export const STAND_IN_RUNTIME = 'STAND-IN STATIC APPIMAGE RUNTIME\n';

function standInTools(dir: string): void {
  mkdirSync(join(dir, 'runtimes'), { recursive: true });
  mkdirSync(join(dir, 'lib', 'x64'), { recursive: true });
  writeFileSync(join(dir, 'runtimes', 'runtime-x64'), STAND_IN_RUNTIME);
  writeFileSync(join(dir, 'desktop-file-validate'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  // mksquashfs <stage> <output> [options]: the stage is copied beside the output, the options noted,
  // and the output gets a few bytes for the runtime to be written over.
  writeFileSync(
    join(dir, 'mksquashfs'),
    [
      '#!/bin/sh',
      'set -e',
      'cp -a "$1" "$2.appdir"',
      'printf "stand-in squashfs" > "$2"',
      'shift 2',
      'printf "%s\\n" "$@" > "$OUT_ARGS"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  chmodSync(join(dir, 'mksquashfs'), 0o755);
}

async function main(prepackaged: string, output: string): Promise<void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tools = join(output, 'appimage-tools');
  standInTools(tools);
  process.env.APPIMAGE_TOOLS_PATH = tools;
  process.env.OUT_ARGS = join(output, 'mksquashfs-args.txt');
  const builder = createRequire(import.meta.url)('electron-builder') as {
    build(options: Record<string, unknown>): Promise<string[]>;
    Platform: { LINUX: { createTarget(targets: string[], ...archs: number[]): unknown } };
    Arch: { x64: number };
  };
  const artifacts = await builder.build({
    projectDir: root,
    targets: builder.Platform.LINUX.createTarget(['AppImage'], builder.Arch.x64),
    prepackaged,
    publish: 'never',
    config: { directories: { output: join(output, 'release') }, npmRebuild: false },
  });
  const artifact = artifacts.find((a) => a.endsWith('.AppImage')) ?? '';
  const head = Buffer.alloc(STAND_IN_RUNTIME.length);
  const fd = openSync(artifact, 'r');
  readSync(fd, head, 0, head.length, 0);
  process.stdout.write(
    `\n${APPIMAGE_MARK}${JSON.stringify({
      appDir: `${artifact}.appdir`,
      mksquashfsArgs: readFileSync(process.env.OUT_ARGS, 'utf8').trim().split('\n'),
      artifact,
      runtimeHead: head.toString('utf8'),
    })}\n`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [prepackaged, output] = process.argv.slice(2);
  if (!prepackaged || !output) {
    process.stderr.write('usage: appimage-stand-in.ts <linux-unpacked> <scratch folder>\n');
    process.exit(2);
  }
  await main(prepackaged, output);
}
