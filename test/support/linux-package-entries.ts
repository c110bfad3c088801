/**
 * What electron-builder itself puts in the Linux packages' desktop entries and package metadata,
 * without building them (no AppImage or fpm tool needed): its own targets run on an already
 * packed folder (`prepackaged`), and `effectiveOptionComputed`, the hook electron-builder offers
 * for exactly this, receives the computed AppImage desktop entry and the deb/rpm fpm arguments
 * (with the desktop file they install) and stops each target there.
 *
 * Run as a child process (electron-builder changes its ways under Vitest):
 *   node test/support/linux-package-entries.ts <packed linux-unpacked folder> <scratch folder>
 * Prints, after ENTRIES_MARK, JSON: { AppImage: { desktop }, deb and rpm: { args, desktop,
 * afterInstall } }.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const ENTRIES_MARK = '@@linux-package-entries@@';

async function main(prepackaged: string, output: string): Promise<void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const builder = createRequire(import.meta.url)('electron-builder') as {
    build(options: Record<string, unknown>): Promise<string[]>;
    Platform: { LINUX: { createTarget(targets: string[]): unknown } };
  };
  const found: Record<string, unknown> = {};
  await builder.build({
    projectDir: root,
    targets: builder.Platform.LINUX.createTarget(['AppImage', 'deb', 'rpm']),
    prepackaged,
    publish: 'never',
    config: { directories: { output }, npmRebuild: false },
    effectiveOptionComputed: async (computed: unknown) => {
      if (Array.isArray(computed)) {
        const [args, desktopFile] = computed as [string[], string];
        const pkg = args[args.indexOf('--package') + 1] ?? '';
        const afterInstall = args[args.indexOf('--after-install') + 1];
        found[pkg.slice(pkg.lastIndexOf('.') + 1)] = {
          args,
          desktop: readFileSync(desktopFile, 'utf8'),
          afterInstall: afterInstall ? readFileSync(afterInstall, 'utf8') : null,
        };
      } else {
        found.AppImage = { desktop: (computed as { desktop: string }).desktop };
      }
      return true; // stop: nothing is built
    },
  });
  // electron-builder logs on stdout: the answer is the last line, after a marker.
  process.stdout.write(`\n${ENTRIES_MARK}${JSON.stringify(found)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [prepackaged, output] = process.argv.slice(2);
  if (!prepackaged || !output) {
    process.stderr.write('usage: linux-package-entries.ts <linux-unpacked> <scratch folder>\n');
    process.exit(2);
  }
  await main(prepackaged, output);
}
