/**
 * The packages a program loads from node_modules at run time: esbuild follows the entry point's
 * relative imports (type-only imports are erased, as at run time) and reports every bare import it
 * leaves external, reduced to its package name. Node built-ins are left out.
 */
import { build } from 'esbuild';
import { isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

export async function runtimePackages(entry: string): Promise<string[]> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
  });
  const found = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imported of input.imports) {
      if (!imported.external || isBuiltin(imported.path)) continue;
      found.add(packageName(imported.path));
    }
  }
  return [...found].sort();
}
