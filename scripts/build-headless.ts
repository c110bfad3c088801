/**
 * Bundles the headless runner (src-main/headless/cli.ts) with esbuild into one CommonJS file,
 * dist-headless/screenpop-headless.cjs, which bin/screenpop-headless.js, `npm run headless` and the
 * systemd unit run. Run from the sources, Node strips the types of every file at each start; the
 * bundle skips that (and the TypeScript stripper's own memory): `npm run bench:runner` measures both.
 * How it is built (minified, atomic, inputs.json for `--if-stale`): scripts/node-bundle.ts.
 *
 * Everything is bundled (the core, ws, libphonenumber-js, FormatJS, the simulator for --demo)
 * except the native keytar and ws's optional native helpers, found in node_modules at run time.
 * So an installed runner needs the bundle, package.json and keytar, not the sources.
 *
 * Run: npm run build:headless (npm ci runs it too, as the `prepare` script).
 * `--if-stale`: build only when the sources changed since the last build, silently otherwise;
 * `npm run headless` runs this first (`preheadless`), so a developer's edit or a `git pull` is
 * never run from an old build. The systemd unit runs bin/ directly and skips it.
 */
import { fileURLToPath } from 'node:url';
import {
  buildFromCommandLine,
  buildNodeBundle,
  bundleIsCurrent,
  type NodeBundle,
  type NodeBundleSpec,
} from './node-bundle.ts';

export const HEADLESS_DIR = 'dist-headless';
export const HEADLESS_FILE = 'screenpop-headless.cjs';
export const HEADLESS_EXTERNALS = ['keytar', 'bufferutil', 'utf-8-validate'];

const HEADLESS: NodeBundleSpec = {
  name: 'screenpop-headless',
  entry: 'src-main/headless/cli.ts',
  dir: HEADLESS_DIR,
  file: HEADLESS_FILE,
  externals: HEADLESS_EXTERNALS,
  script: import.meta.url,
};

export type HeadlessBuild = NodeBundle;

/** Builds into `outDir` (default dist-headless/, relative to the checkout); `quiet` for tests. */
export const buildHeadless = (options: { outDir?: string; quiet?: boolean } = {}) =>
  buildNodeBundle(HEADLESS, options);

/** True when `outDir` (default dist-headless/) holds a bundle built from the sources as they are now. */
export const headlessBuildIsCurrent = (outDir = HEADLESS_DIR): boolean =>
  bundleIsCurrent(HEADLESS, outDir);

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  buildFromCommandLine(HEADLESS);
