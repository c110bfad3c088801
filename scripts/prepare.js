// npm's `prepare` (run by `npm ci` and `npm install` in this checkout): builds the headless runner
// (scripts/build-headless.ts, into dist-headless/). Plain JavaScript, so that any Node can run it:
// an install without the development dependencies (the relay's
// `npm ci --omit=dev --workspace=@screenpop/relay`) has neither esbuild nor the Node 24 that strips
// TypeScript, and must still succeed; there it says in one line that the runner was not built.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const stripsTypes = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
const missing = !existsSync(`${root}node_modules/esbuild/package.json`)
  ? 'the development dependencies are not installed'
  : !stripsTypes
    ? `building needs Node.js 22.18 or newer, this is ${process.versions.node}`
    : undefined;
if (missing) {
  process.stderr.write(
    `screenpop-headless not built: ${missing} (npm ci without --omit=dev builds it; ` +
      'or later: npm run build:headless).\n',
  );
  process.exit(0);
}
const built = spawnSync(process.execPath, ['scripts/build-headless.ts'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(built.status ?? 1);
