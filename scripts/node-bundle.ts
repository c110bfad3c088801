/**
 * One way to ship a Node program of this repository built: esbuild bundles its entry into one
 * CommonJS file, which the shipped commands run instead of the TypeScript sources. Run from the
 * sources, Node strips the types of every file at each start and keeps the stripper in memory
 * (about 40 MB of resident memory for the runner and for the relay); the bundle skips both.
 * Used by scripts/build-headless.ts (the runner) and scripts/build-relay.ts (the relay).
 *
 * - Everything is bundled (our sources and their libraries) except what `externals` names: native
 *   modules and optional native helpers, found in node_modules at run time when present.
 * - Whitespace and syntax are minified (a smaller script string in memory); names are kept, so a
 *   stack trace still names functions. The linked source map beside the bundle maps it back:
 *   `node --enable-source-maps <bundle> ...`.
 * - The catalogues keep only their messages: translators' descriptions and review marks are not
 *   needed at run time.
 * - Written atomically (temporary file, then rename), so a process starting while another builds
 *   never reads half a file. `inputs.json` beside the bundle lists every input with its SHA-256:
 *   `bundleIsCurrent()` tells a build that matches the sources from a stale one (`--if-stale`, and
 *   the black-box tests, rebuild only then).
 */
import type { Plugin } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../src-shared/files/atomic-file.ts';
import { catalogueMessagesOnly } from './catalogue-messages-only.ts';

const INPUTS_FILE = 'inputs.json';
/** This file and its plugin: a change in how programs are built is a change of each build. */
const BUILD_FILES = [import.meta.url, new URL('./catalogue-messages-only.ts', import.meta.url)].map(
  (url) => fileURLToPath(url),
);

/** What to bundle and where; `script` is the build script's import.meta.url (an input too). */
export interface NodeBundleSpec {
  /** The program's name, for the build's one line of output. */
  name: string;
  /** The entry, relative to the checkout. */
  entry: string;
  /** The output folder, relative to the checkout. */
  dir: string;
  /** The bundle's file name in `dir` (.cjs). */
  file: string;
  externals: string[];
  script: string;
  /** More esbuild plugins, after the catalogues' one. */
  plugins?: Plugin[];
  /** Files written beside the bundle (paths relative to the output folder), e.g. data it reads. */
  files?: (root: string) => Array<{ path: string; contents: string }>;
  /** Inputs the bundle does not import but the build reads (for `files`), relative to the checkout. */
  inputs?: (root: string) => string[];
}

export interface NodeBundle {
  file: string;
  bytes: number;
  inputs: number;
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** The checkout a build script is in: the folder above scripts/. */
const rootOf = (spec: NodeBundleSpec) => fileURLToPath(new URL('..', spec.script));

/** Builds into `outDir` (default spec.dir, relative to the checkout); `quiet` for tests. */
export async function buildNodeBundle(
  spec: NodeBundleSpec,
  options: { outDir?: string; quiet?: boolean } = {},
): Promise<NodeBundle> {
  const root = rootOf(spec);
  const outDir = resolve(root, options.outDir ?? spec.dir);
  const file = join(outDir, spec.file);
  // Loaded here, not at the top: `--if-stale` with a current build needs no esbuild (a checkout
  // installed without its development dependencies can still run the built program).
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: [spec.entry],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    external: spec.externals,
    // Dynamic imports (of keytar, of the simulator for --demo, of the gateway) become require():
    // one file, and the CommonJS loader finds an external in node_modules.
    supported: { 'dynamic-import': false },
    minifyWhitespace: true,
    minifySyntax: true,
    // ASCII: a script with one character above U+00FF is held in memory at two bytes a character.
    charset: 'ascii',
    legalComments: 'none',
    sourcemap: 'linked',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [catalogueMessagesOnly, ...(spec.plugins ?? [])],
    metafile: true,
    write: false,
    logLevel: options.quiet ? 'warning' : 'info',
  });
  const inputs: Record<string, string> = {};
  // The build scripts are inputs too: a change in how a program is built is a change of the build.
  const scripts = [fileURLToPath(spec.script), ...BUILD_FILES].map((f) => relative(root, f));
  const read = [...Object.keys(result.metafile.inputs), ...scripts, ...(spec.inputs?.(root) ?? [])];
  for (const path of [...new Set(read)].sort())
    inputs[path] = sha256(readFileSync(join(root, path)));
  for (const extra of spec.files?.(root) ?? [])
    await writeFileAtomic(join(outDir, extra.path), extra.contents, 0o644);
  // The map first and the list of inputs last: a current inputs.json means the bundle is written.
  const isMap = (path: string) => (path.endsWith('.map') ? 0 : 1);
  const ordered = [...result.outputFiles].sort((a, b) => isMap(a.path) - isMap(b.path));
  for (const out of ordered) await writeFileAtomic(out.path, out.contents, 0o644);
  await writeFileAtomic(
    join(outDir, INPUTS_FILE),
    `${JSON.stringify({ bundle: spec.file, inputs }, null, 1)}\n`,
    0o644,
  );
  const bundle = result.outputFiles.find((o) => o.path === file);
  return { file, bytes: bundle?.contents.length ?? 0, inputs: Object.keys(inputs).length };
}

/**
 * True when `outDir` (default spec.dir) holds a bundle built from the sources as they are now:
 * every input listed in inputs.json still has its hash (a new import changes the file importing it).
 */
export function bundleIsCurrent(spec: NodeBundleSpec, outDir = spec.dir): boolean {
  const root = rootOf(spec);
  try {
    const dir = resolve(root, outDir);
    const listed = JSON.parse(readFileSync(join(dir, INPUTS_FILE), 'utf8')) as {
      inputs: Record<string, string>;
    };
    readFileSync(join(dir, spec.file));
    return Object.entries(listed.inputs).every(
      ([path, hash]) => sha256(readFileSync(join(root, path))) === hash,
    );
  } catch {
    return false; // not built, or an input is gone
  }
}

/**
 * The build script's command line: builds, and says so in one line on stderr. `--if-stale`: build
 * only when the sources changed since the last build, silently otherwise.
 */
export function buildFromCommandLine(spec: NodeBundleSpec): void {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && bundleIsCurrent(spec)) process.exit(0);
  buildNodeBundle(spec, { quiet: ifStale }).then(
    (built) =>
      process.stderr.write(
        `${spec.name} built: ${relative(rootOf(spec), built.file)} (${Math.round(built.bytes / 1024)} KiB, ${built.inputs} inputs)\n`,
      ),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
