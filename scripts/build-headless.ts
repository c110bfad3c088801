/**
 * Bundles the headless runner (src-main/headless/cli.ts) with esbuild into one CommonJS file,
 * dist-headless/screenpop-headless.cjs, which bin/screenpop-headless.js, `npm run headless` and the
 * systemd unit run. Run from the sources, Node strips the types of every file at each start; the
 * bundle skips that (and the TypeScript stripper's own memory): `npm run bench:runner` measures both.
 *
 * - Everything is bundled (the core, ws, libphonenumber-js, FormatJS, the simulator for --demo)
 *   except the native keytar and ws's optional native helpers, found in node_modules at run time.
 *   So an installed runner needs the bundle, package.json and keytar, not the sources.
 * - Whitespace and syntax are minified (a smaller script string in memory); names are kept, so a
 *   stack trace in a `fault` line still names functions. The linked source map beside the bundle
 *   maps it back: `node --enable-source-maps bin/screenpop-headless.js ...`.
 * - The catalogues keep only their messages: translators' descriptions and review marks are not
 *   needed at run time.
 * - Written atomically (temporary file, then rename), so a runner starting while another process
 *   builds never reads half a file. `inputs.json` beside the bundle lists every input with its
 *   SHA-256: `headlessBuildIsCurrent()` tells a build that matches the sources from a stale one
 *   (the black-box tests rebuild only then).
 *
 * Run: npm run build:headless (npm ci runs it too, as the `prepare` script).
 * `--if-stale`: build only when the sources changed since the last build, silently otherwise;
 * `npm run headless` runs this first (`preheadless`), so a developer's edit or a `git pull` is
 * never run from an old build. The systemd unit runs bin/ directly and skips it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../src-shared/atomic-file.ts';
import { catalogueMessagesOnly } from './catalogue-messages-only.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HEADLESS_DIR = 'dist-headless';
export const HEADLESS_FILE = 'screenpop-headless.cjs';
const INPUTS_FILE = 'inputs.json';
/** This file is an input too: a change in how the runner is built is a change of the build. */
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

export const HEADLESS_EXTERNALS = ['keytar', 'bufferutil', 'utf-8-validate'];

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

export interface HeadlessBuild {
  file: string;
  bytes: number;
  inputs: number;
}

/** Builds into `outDir` (default dist-headless/, relative to the checkout); `quiet` for tests. */
export async function buildHeadless(
  options: { outDir?: string; quiet?: boolean } = {},
): Promise<HeadlessBuild> {
  const root = ROOT;
  const outDir = resolve(root, options.outDir ?? HEADLESS_DIR);
  const file = join(outDir, HEADLESS_FILE);
  // Loaded here, not at the top: `--if-stale` with a current build needs no esbuild (a checkout
  // installed without its development dependencies can still run `npm run headless`).
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['src-main/headless/cli.ts'],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    external: HEADLESS_EXTERNALS,
    // import('keytar') and import('../../src-sim/demo.ts') become require(): one file, and the
    // CommonJS loader finds keytar in node_modules.
    supported: { 'dynamic-import': false },
    minifyWhitespace: true,
    minifySyntax: true,
    // ASCII: a script with one character above U+00FF is held in memory at two bytes a character.
    charset: 'ascii',
    legalComments: 'none',
    sourcemap: 'linked',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [catalogueMessagesOnly],
    metafile: true,
    write: false,
    logLevel: options.quiet ? 'warning' : 'info',
  });
  const inputs: Record<string, string> = {};
  for (const path of [...Object.keys(result.metafile.inputs), THIS_FILE].sort())
    inputs[path] = sha256(readFileSync(join(root, path)));
  // The map first and the list of inputs last: a current inputs.json means the bundle is written.
  const isMap = (path: string) => (path.endsWith('.map') ? 0 : 1);
  const ordered = [...result.outputFiles].sort((a, b) => isMap(a.path) - isMap(b.path));
  for (const out of ordered) await writeFileAtomic(out.path, out.contents, 0o644);
  await writeFileAtomic(
    join(outDir, INPUTS_FILE),
    `${JSON.stringify({ bundle: HEADLESS_FILE, inputs }, null, 1)}\n`,
    0o644,
  );
  const bundle = result.outputFiles.find((o) => o.path === file);
  return { file, bytes: bundle?.contents.length ?? 0, inputs: Object.keys(inputs).length };
}

/**
 * True when `outDir` (default dist-headless/) holds a bundle built from the sources as they are now:
 * every input listed in inputs.json still has its hash (a new import changes the file importing it).
 */
export function headlessBuildIsCurrent(outDir = HEADLESS_DIR): boolean {
  const root = ROOT;
  try {
    const dir = resolve(root, outDir);
    const listed = JSON.parse(readFileSync(join(dir, INPUTS_FILE), 'utf8')) as {
      inputs: Record<string, string>;
    };
    readFileSync(join(dir, HEADLESS_FILE));
    return Object.entries(listed.inputs).every(
      ([path, hash]) => sha256(readFileSync(join(root, path))) === hash,
    );
  } catch {
    return false; // not built, or an input is gone
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && headlessBuildIsCurrent()) process.exit(0);
  buildHeadless({ quiet: ifStale }).then(
    (built) =>
      process.stderr.write(
        `screenpop-headless built: ${relative(ROOT, built.file)} (${Math.round(built.bytes / 1024)} KiB, ${built.inputs} inputs)\n`,
      ),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
