/**
 * Black box: the runner reads the system's certificate store (and builds a TLS context from it)
 * only for a TLS connection. `--demo` talks to the simulator on this computer over plain http, so
 * it never pays for either: reading the store was 459 ms of the built runner's start in a CPU
 * profile, and the TLS context another 376 ms (issue 24). Whether a TLS connection still trusts
 * the configured CA is runner-network.test.ts's (an openssl-made CA, through a real proxy), and the
 * transport's own test/net/trust.test.ts's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, ProcessGroup } from '../../rigs/processes.ts';
import { RunnerProcess } from './services.ts';

const SPY = ['--import', './test/blackbox/fixtures/report-ca-reads.ts'];

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

const reads = (file: string): string[] => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe('the runner and the system certificate store', () => {
  it('the spy sees a store read and a context built from it (so its silence below means none)', async () => {
    group = new ProcessGroup();
    const file = join(group.tempDir('ca-reads-'), 'reads.txt');
    const script =
      "require('node:tls').createSecureContext({ ca: require('node:tls').getCACertificates('system') })";
    const proc = group.spawn('node -e', NODE, [...SPY, '-e', script], {
      env: { ...process.env, REPORT_CA_FILE: file },
    });
    expect(await proc.exit, proc.describe()).toEqual({ code: 0, signal: null });
    expect(reads(file)).toEqual(['getCACertificates system', 'createSecureContext with ca']);
  });

  it(
    '--demo connects and pops without reading it, and its log does not claim it was read',
    { timeout: 40_000 },
    async () => {
      group = new ProcessGroup();
      const file = join(group.tempDir('ca-reads-'), 'reads.txt');
      const runner = new RunnerProcess(
        group.spawnRunner('runner --demo', ['--demo'], {
          nodeArgs: SPY,
          env: { ...process.env, REPORT_CA_FILE: file },
        }),
      );
      await runner.waitForState('connected', 20_000);
      // The first ring (the demo rings every 5 s): the token, the socket and a pop, all over http.
      await runner.waitFor(() => runner.pops().length > 0, 'a pop', 15_000);
      runner.proc.signal('SIGTERM');
      expect(await runner.proc.exit, runner.explain()).toEqual({ code: 0, signal: null });
      expect(reads(file)).toEqual([]);
      const network = runner.proc
        .stderr()
        .split('\n')
        .find((l) => l.includes('"msg":"network"'));
      expect(network, runner.explain()).toContain('read at the first TLS connection');
      expect(runner.proc.stderr()).not.toContain('the system store (');
    },
  );
});
