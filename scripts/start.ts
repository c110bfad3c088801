/**
 * npm start: checks for the Electron program first, and only then builds (main, preload, renderer)
 * and runs Electron on this folder. When Electron has never been fetched it lets Electron's own
 * installer try once (that is how Electron 45 gets its binary); when that is impossible it says in
 * plain words what is missing and how to provide it, instead of Electron's stack trace.
 * Extra arguments are passed to the app: npm start -- --some-switch
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { explainMissingElectron, hostLocateInput, locateElectron } from './electron-binary.ts';
import { runAttached, runQuietErrors } from './run-command.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What works meanwhile: the same engine, without Electron (README's quick start). */
const WITHOUT_ELECTRON =
  'Meanwhile, without Electron: npm run -s headless -- --demo rings the same engine in this terminal, one JSON line per event, a ring about every 5 s (Ctrl+C stops it).';

/**
 * Electron's downloader failed: one line in words (it prints a bare "TypeError: fetch failed" and a
 * stack), the way to provide Electron follows.
 */
function downloadFailure(stderr: string): string {
  const first = stderr.split('\n').find((l) => l.trim() && !/^\s+at /.test(l)) ?? '';
  const code = /\b(E[A-Z]{3,}|ERR_[A-Z_]+)\b/.exec(stderr)?.[1];
  const why = /fetch failed|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT|ENETUNREACH|ECONNRESET/.test(
    stderr,
  )
    ? `the download server could not be reached${code ? ` (${code})` : ''}`
    : first.replace(/^\w*Error: /, '').slice(0, 200) || 'no reason given';
  return `The download did not work: ${why}.`;
}

async function main(): Promise<number> {
  const input = hostLocateInput();
  let located = locateElectron(input);
  if (!located.ok && !input.env.ELECTRON_OVERRIDE_DIST_PATH) {
    process.stderr.write('Electron has not been downloaded yet; fetching it now (first run)…\n');
    const fetched = await runQuietErrors(
      process.execPath,
      [join(input.electronPackageDir, 'install.js')],
      { cwd: root },
    );
    if (fetched.code !== 0) process.stderr.write(`${downloadFailure(fetched.stderr)}\n`);
    located = locateElectron(input);
  }
  if (!located.ok) {
    process.stderr.write(
      `\n${explainMissingElectron('npm start cannot run Screenpop', located.missing, input)}\n\n${WITHOUT_ELECTRON}\n`,
    );
    return 1;
  }
  if (located.warning) process.stderr.write(`${located.warning}\n`);

  const built = await runAttached('npm', ['run', 'build'], { cwd: root });
  if (built !== 0) return built;
  process.stderr.write(`starting ${located.binary.path} (${located.binary.source})\n`);
  return runAttached(located.binary.path, ['.', ...process.argv.slice(2)], {
    cwd: root,
    forwardSignals: true,
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`npm start failed: ${String(err)}\n`);
    process.exit(1);
  },
);
