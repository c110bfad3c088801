/**
 * Bundles Electron's main process and preload with esbuild (no Electron binary needed):
 * - src-main/electron/main.ts -> dist/main/main.cjs: Node platform, CommonJS; electron, the native
 *   keytar, electron-updater and ws's optional native helpers stay external (resolved from
 *   node_modules at run time, so they are the desktop's production `dependencies`; electron-updater
 *   loads its platform's updater lazily by file); everything else (ws, libphonenumber-js,
 *   the core, the simulator for demo mode) is bundled in, and is a devDependency.
 * - src-main/electron/preload.ts -> dist/preload/preload.cjs: CommonJS with only `electron`
 *   external, as a sandboxed preload can require nothing else.
 * Run: npm run build:main
 */
import { build, type BuildOptions } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { catalogueMessagesOnly } from './catalogue-messages-only.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

const common: BuildOptions = {
  absWorkingDir: root,
  bundle: true,
  format: 'cjs',
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'info',
  charset: 'utf8',
  define: { 'process.env.NODE_ENV': '"production"' },
};

export const MAIN_EXTERNALS = [
  'electron',
  'electron-updater',
  'keytar',
  // Native: the Kerberos binding of proxy authentication (src-shared/net/gssapi.ts), optional.
  'kerberos',
  'bufferutil',
  'utf-8-validate',
];

/** Builds into `outDir` (default dist/); `quiet` for tests. */
export async function buildMain(options: { outDir?: string; quiet?: boolean } = {}): Promise<void> {
  const out = options.outDir ?? 'dist';
  const log: BuildOptions = options.quiet ? { logLevel: 'warning' } : {};
  await Promise.all([
    build({
      ...common,
      ...log,
      entryPoints: ['src-main/electron/main.ts'],
      outfile: `${out}/main/main.cjs`,
      platform: 'node',
      target: 'node22',
      external: MAIN_EXTERNALS,
      // import('keytar') becomes require('keytar'): the CommonJS loader is what finds a native
      // module unpacked beside app.asar.
      supported: { 'dynamic-import': false },
      // Smaller app.asar (the package budget): whitespace and syntax minified, names kept so a
      // logged stack still names functions (the linked map, left out of the package, maps it back);
      // the catalogues without their translators' notes.
      minifyWhitespace: true,
      minifySyntax: true,
      plugins: [catalogueMessagesOnly],
    }),
    build({
      ...common,
      ...log,
      entryPoints: ['src-main/electron/preload.ts'],
      outfile: `${out}/preload/preload.cjs`,
      // A sandboxed preload has a browser-like environment plus a few Electron modules.
      platform: 'browser',
      target: 'chrome140',
      external: ['electron'],
    }),
  ]);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildMain().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
