#!/usr/bin/env node
// screenpop-headless: runs the built runner, dist-headless/screenpop-headless.cjs (made by
// scripts/build-headless.ts: `npm run build:headless`, and by `npm ci` as the `prepare` script).
// The sources run with `npm run headless:dev`. This file is plain JavaScript every Node can read,
// so that an old Node and a missing build each get a sentence saying what to do. See
// src-main/headless/README.md for flags, the output lines and exit codes.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const supported = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
if (!supported) {
  process.stderr.write(
    `screenpop-headless needs Node.js 22.18 or newer; this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      'Install a newer Node.js, or use the one `npm ci` puts in this checkout:\n' +
      '  node_modules/.bin/node bin/screenpop-headless.js ...   (or: npm run -s headless -- ...)\n',
  );
  process.exit(2); // as a usage error: nothing ran, and a service manager should not retry
}
const built = fileURLToPath(new URL('../dist-headless/screenpop-headless.cjs', import.meta.url));
if (!existsSync(built)) {
  process.stderr.write(
    `screenpop-headless is not built: ${built} is missing.\n` +
      'Build it in this checkout with `npm run build:headless` (`npm ci` does it too),\n' +
      'or run the sources with `npm run headless:dev -- ...`.\n',
  );
  process.exit(2);
}
createRequire(import.meta.url)(built);
