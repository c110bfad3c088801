/**
 * Black box: the runner as it ships is the bundle scripts/build-headless.ts makes, which
 * bin/screenpop-headless.js runs (`npm run headless` and the systemd unit run bin). The bundle
 * needs none of the TypeScript sources: copied alone with bin/ and package.json into an empty
 * folder, without node_modules, `--demo` connects and pops. bin without a build says how to make
 * one. A build records the hash of each input, so a changed source makes it stale. And it never
 * loads Node's fetch implementation (the transport answers with its own Response). Its languages
 * other than English are files beside it, read only for the language it speaks.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildHeadless,
  HEADLESS_DIR,
  headlessBuildIsCurrent,
} from '../../scripts/build-headless.ts';
import { ensureRunnerBuilt, NODE, ProcessGroup, REPO, RUNNER } from '../../rigs/processes.ts';
import { RunnerProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

beforeAll(() => ensureRunnerBuilt(), 180_000);

/** A folder with bin/ and package.json of this checkout, and dist-headless/ when `built`. */
function installInto(dir: string, built: boolean): void {
  mkdirSync(join(dir, 'bin'));
  cpSync(join(REPO, RUNNER), join(dir, RUNNER));
  cpSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  if (built) cpSync(join(REPO, HEADLESS_DIR), join(dir, HEADLESS_DIR), { recursive: true });
}

describe('the built runner', () => {
  it('runs from the bundle alone: no sources, no node_modules; --demo connects and pops', async () => {
    group = new ProcessGroup();
    const dir = group.tempDir('runner-installed-');
    installInto(dir, true);
    const runner = new RunnerProcess(
      group.spawn('runner (bundle only)', NODE, [RUNNER, '--demo'], { cwd: dir }),
    );
    await runner.waitFor(() => runner.pops().length > 0, 'a pop', 30_000);
    expect(runner.statuses().map((s) => s.state)).toContain('connected');
    runner.proc.signal('SIGTERM');
    expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
    expect(runner.badLines).toEqual([]);
  }, 60_000);

  it('holds English alone in the bundle; speaks German from catalogues/de.json, installed', async () => {
    group = new ProcessGroup();
    const dir = group.tempDir('runner-installed-de-');
    installInto(dir, true);
    const bundle = readFileSync(join(dir, HEADLESS_DIR, 'screenpop-headless.cjs'), 'latin1');
    expect(bundle).toContain('Connecting to the service.');
    // German words are not in it (they were: all five languages, ~4 MB of the runner's memory).
    expect(bundle).not.toContain('Verbindung zum Dienst');
    const runner = new RunnerProcess(
      group.spawn('runner --lang de (bundle only)', NODE, [RUNNER, '--demo', '--lang', 'de'], {
        cwd: dir,
      }),
    );
    await runner.waitFor(() => runner.statuses().length > 0, 'a status line', 30_000);
    expect(runner.statuses()[0]?.reason).toBe('Verbindung zum Dienst wird hergestellt.');
    runner.proc.signal('SIGTERM');
    expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('fetches its token and extensions without loading Node’s fetch implementation (undici: ~17 MB)', async () => {
    group = new ProcessGroup();
    const report = join(group.tempDir('runner-modules-'), 'loaded.txt');
    const runner = new RunnerProcess(
      await group.spawnRunner('runner --demo', ['--demo'], {
        nodeArgs: ['--import', './test/blackbox/fixtures/report-modules.ts'],
        env: { ...process.env, REPORT_MODULES_FILE: report },
      }),
    );
    // A pop comes after the token call and the extension list (both through the transport's fetch).
    await runner.waitFor(() => runner.pops().length > 0, 'a pop', 30_000);
    runner.proc.signal('SIGTERM');
    expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
    const loaded = readFileSync(report, 'utf8').split('\n');
    expect(loaded).toContain('NativeModule http');
    expect(loaded.filter((m) => m.includes('undici'))).toEqual([]);
  }, 60_000);

  it('bin without a build says how to build it, exit 2, nothing on stdout', () => {
    group = new ProcessGroup();
    const dir = group.tempDir('runner-unbuilt-');
    installInto(dir, false);
    const run = spawnSync(NODE, [RUNNER, '--demo'], { cwd: dir, encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('screenpop-headless is not built');
    expect(run.stderr).toContain('npm run build:headless');
    expect(run.stderr).toContain('npm run headless:dev');
  });

  it('npm’s prepare without the development dependencies (the relay’s --omit=dev install) says so and succeeds', () => {
    group = new ProcessGroup();
    const dir = group.tempDir('runner-omit-dev-');
    mkdirSync(join(dir, 'scripts'));
    cpSync(join(REPO, 'scripts/prepare.js'), join(dir, 'scripts/prepare.js'));
    cpSync(join(REPO, 'package.json'), join(dir, 'package.json'));
    const run = spawnSync(NODE, ['scripts/prepare.js'], { cwd: dir, encoding: 'utf8' });
    expect(run.status).toBe(0); // before: `node scripts/build-headless.ts` failed the whole install
    expect(run.stderr).toContain('screenpop-headless not built');
    expect(run.stderr).toContain('npm run build:headless');
    expect(readdirSync(dir).sort()).toEqual(['package.json', 'scripts']);
  });

  it('is current right after a build, and stale once an input differs from its recorded hash', async () => {
    group = new ProcessGroup();
    const out = group.tempDir('runner-build-');
    const built = await buildHeadless({ outDir: out, quiet: true });
    expect(built.inputs).toBeGreaterThan(100);
    expect(headlessBuildIsCurrent(out)).toBe(true);
    const inputsFile = join(out, 'inputs.json');
    const listed = JSON.parse(readFileSync(inputsFile, 'utf8')) as {
      inputs: Record<string, string>;
    };
    expect(Object.keys(listed.inputs)).toContain('src-main/headless/cli.ts');
    // A language read from a file beside the bundle is an input too.
    expect(Object.keys(listed.inputs)).toContain('src-shared/i18n/catalogues/de/status.json');
    listed.inputs['src-main/headless/cli.ts'] = '0'.repeat(64);
    writeFileSync(inputsFile, JSON.stringify(listed));
    expect(headlessBuildIsCurrent(out)).toBe(false);
  }, 120_000);
});
