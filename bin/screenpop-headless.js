#!/usr/bin/env node
// screenpop-headless: runs src-main/headless/cli.ts straight from TypeScript, which needs a Node.js
// that strips types by itself (22.18 or newer). An older Node would fail with a bare
// ERR_UNKNOWN_FILE_EXTENSION, so this file checks first, in JavaScript every Node can read, and
// says what to do. See src-main/headless/README.md for flags, the output lines and exit codes.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const strips = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
if (!strips) {
  process.stderr.write(
    `screenpop-headless needs Node.js 22.18 or newer; this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      'Install a newer Node.js, or use the one `npm ci` puts in this checkout:\n' +
      '  node_modules/.bin/node bin/screenpop-headless.js ...   (or: npm run -s headless -- ...)\n',
  );
  process.exit(2); // as a usage error: nothing ran, and a service manager should not retry
}
await import('../src-main/headless/cli.ts');
