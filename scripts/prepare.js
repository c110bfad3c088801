// npm's `prepare` (run by `npm ci` and `npm install` in this checkout): builds the headless runner
// (scripts/build-headless.ts, into dist-headless/) and the relay (scripts/build-relay.ts, into
// dist-relay/). Plain JavaScript, so that any Node can run it. Each program is built when what its
// build needs is installed, and otherwise skipped with one line saying so, and the install
// succeeds: `npm ci --omit=dev --workspace=@screenpop/relay` has neither esbuild nor the Node 24
// that strips TypeScript (nothing is built); `npm ci --workspace=@screenpop/relay` (the relay's
// host install, deploy/relay/) has esbuild and the relay's libraries, not the runner's (the relay
// is built, the runner is not).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const stripsTypes = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);

/** The packages `field` of `manifest` lists that are not installed (beside it or at the root). */
function notInstalled(manifest, field) {
  const dir = manifest.slice(0, manifest.lastIndexOf('/') + 1);
  const listed = Object.keys(JSON.parse(readFileSync(root + manifest, 'utf8'))[field] ?? {});
  return listed.filter(
    (name) =>
      !existsSync(`${root}${dir}node_modules/${name}/package.json`) &&
      !existsSync(`${root}node_modules/${name}/package.json`),
  );
}

const programs = [
  {
    name: 'screenpop-headless',
    script: 'scripts/build-headless.ts',
    npm: 'build:headless',
    // The runner bundles libraries the repository lists as development dependencies.
    libraries: () => notInstalled('package.json', 'devDependencies'),
  },
  {
    name: 'screenpop-relay',
    script: 'scripts/build-relay.ts',
    npm: 'build:relay',
    libraries: () => notInstalled('src-relay/package.json', 'dependencies'),
  },
];

for (const p of programs) {
  const missing = !existsSync(`${root}node_modules/esbuild/package.json`)
    ? 'the development dependencies are not installed (npm ci without --omit=dev builds it'
    : !stripsTypes
      ? `building needs Node.js 22.18 or newer, this is ${process.versions.node} (use a newer Node.js`
      : p.libraries().length > 0
        ? `its libraries are not installed: ${p.libraries().slice(0, 3).join(', ')}... (npm ci in the checkout, without --workspace, builds it`
        : undefined;
  if (missing) {
    process.stderr.write(`${p.name} not built: ${missing}; or later: npm run ${p.npm}).\n`);
    continue;
  }
  const built = spawnSync(process.execPath, [p.script], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
