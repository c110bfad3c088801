/**
 * Black box: `--version` of the three commands a newcomer runs (the simulator, the relay and the
 * headless runner, as npm's scripts start them): the package's version on stdout, nothing on
 * stderr, exit 0. Before, each refused the flag as unknown (exit 2) and printed its usage.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv } from '../support/child-env.ts';
import {
  ensureRelayBuilt,
  ensureRunnerBuilt,
  NODE,
  RELAY,
  REPO,
  RUNNER,
} from '../../rigs/processes.ts';

const version = (file: string): string =>
  (JSON.parse(readFileSync(join(REPO, file), 'utf8')) as { version: string }).version;

function run(script: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(NODE, [script, '--version'], {
    cwd: REPO,
    env: childEnv(),
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('--version', { timeout: 60_000 }, () => {
  it('the simulator (npm run sim -- --version)', () => {
    expect(run('src-sim/cli.ts')).toEqual({
      status: 0,
      stdout: `screenpop-sim ${version('package.json')}\n`,
      stderr: '',
    });
  });

  it('the relay as built (npm run relay -- --version)', () => {
    ensureRelayBuilt();
    expect(run(RELAY)).toEqual({
      status: 0,
      stdout: `screenpop-relay ${version('src-relay/package.json')}\n`,
      stderr: '',
    });
  });

  it('the runner as built (npm run -s headless -- --version)', () => {
    ensureRunnerBuilt();
    expect(run(RUNNER)).toEqual({
      status: 0,
      stdout: `screenpop-headless ${version('package.json')}\n`,
      stderr: '',
    });
  });
});
