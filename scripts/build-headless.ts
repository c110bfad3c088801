/**
 * Bundles the headless runner (src-main/headless/cli.ts) with esbuild into one CommonJS file,
 * dist-headless/screenpop-headless.cjs, which bin/screenpop-headless.js, `npm run headless` and the
 * systemd unit run. Run from the sources, Node strips the types of every file at each start; the
 * bundle skips that (and the TypeScript stripper's own memory): `npm run bench:runner` measures both.
 * How it is built (minified, atomic, inputs.json for `--if-stale`): scripts/node-bundle.ts.
 *
 * Everything is bundled (the core, ws, libphonenumber-js, FormatJS, the simulator for --demo)
 * except the native keytar and ws's optional native helpers, found in node_modules at run time,
 * and the languages other than English: each is a file beside the bundle,
 * catalogues/<locale>.json, read when the runner speaks it (src-shared/i18n/translations.ts is
 * swapped for a reader of those files), so a runner does not hold the four languages it does not
 * speak (~4 MB of memory: bench/runner.ts). So an installed runner needs the bundle (with its
 * catalogues/ folder), package.json and keytar, not the sources.
 *
 * Run: npm run build:headless (npm ci runs it too, as the `prepare` script).
 * `--if-stale`: build only when the sources changed since the last build, silently otherwise;
 * `npm run headless` runs this first (`preheadless`), so a developer's edit or a `git pull` is
 * never run from an old build. The systemd unit runs bin/ directly and skips it.
 */
import type { Plugin } from 'esbuild';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messagesOfCatalogue } from './catalogue-messages-only.ts';
import { LOCALES } from '../src-shared/i18n/locales.ts';
import {
  buildFromCommandLine,
  buildNodeBundle,
  bundleIsCurrent,
  type NodeBundle,
  type NodeBundleSpec,
} from './node-bundle.ts';

export const HEADLESS_DIR = 'dist-headless';
export const HEADLESS_FILE = 'screenpop-headless.cjs';
export const HEADLESS_EXTERNALS = ['keytar', 'kerberos', 'bufferutil', 'utf-8-validate'];

const CATALOGUES_DIR = 'src-shared/i18n/catalogues';
/** The languages read from files beside the bundle (English is in it). */
const FILE_LOCALES = LOCALES.filter((l) => l !== 'en');
export const CATALOGUE_OUT_DIR = 'catalogues';

/** What replaces translations.ts in the bundle: a reader of catalogues/<locale>.json. */
const TRANSLATIONS_FROM_FILES = `
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
export function translationOf(locale) {
  const file = join(__dirname, ${JSON.stringify(CATALOGUE_OUT_DIR)}, locale + '.json');
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error('The words of language "' + locale + '" are missing (' + file + '): rebuild the runner with npm run build:headless.', { cause: error });
  }
  return new Map(Object.entries(JSON.parse(text)));
}
`;

const translationsFromFiles: Plugin = {
  name: 'translations-from-files',
  setup(b) {
    b.onLoad({ filter: /[\\/]src-shared[\\/]i18n[\\/]translations\.ts$/ }, () => ({
      contents: TRANSLATIONS_FROM_FILES,
      loader: 'js',
    }));
  },
};

/** Every catalogue file of the sources: inputs of the build, bundled or written beside it. */
function catalogueFiles(root: string): string[] {
  return readdirSync(join(root, CATALOGUES_DIR), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(CATALOGUES_DIR, f));
}

/** One language's messages, flat (`namespace.key` -> text), as translations.ts gives them. */
function flatCatalogue(root: string, locale: string): string {
  const dir = join(root, CATALOGUES_DIR, locale);
  const flat: Record<string, string> = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const namespace = file.slice(0, -'.json'.length);
    const text = messagesOfCatalogue(readFileSync(join(dir, file), 'utf8'));
    const entries = JSON.parse(text) as Record<string, { message: string }>;
    for (const [key, entry] of Object.entries(entries)) flat[`${namespace}.${key}`] = entry.message;
  }
  return `${JSON.stringify(flat)}\n`;
}

const HEADLESS: NodeBundleSpec = {
  name: 'screenpop-headless',
  entry: 'src-main/headless/cli.ts',
  dir: HEADLESS_DIR,
  file: HEADLESS_FILE,
  externals: HEADLESS_EXTERNALS,
  script: import.meta.url,
  plugins: [translationsFromFiles],
  files: (root) =>
    FILE_LOCALES.map((locale) => ({
      path: join(CATALOGUE_OUT_DIR, `${locale}.json`),
      contents: flatCatalogue(root, locale),
    })),
  inputs: (root) => catalogueFiles(root),
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
