/**
 * Black box (issue 33 item 6): the runner's enrolment on a headless server, where no keychain
 * answers (this machine: no Secret Service). The code comes from a file or standard input, never
 * the command line, so /proc/<pid>/cmdline does not hold it; the device credential goes into a
 * 0600 file (`--credential-file`), so a restart connects without a new code; a credential file
 * that others can read is refused before anything connects.
 */
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ensureRunnerBuilt,
  envWithout,
  NODE,
  ProcessGroup,
  RUNNER,
  until,
} from '../../rigs/processes.ts';
import { RelayProcess, RunnerProcess, SimProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

describe('the runner’s enrolment without a keychain', () => {
  it('reads the code from a file or stdin, keeps the credential in a 0600 file, and restarts without a code', async () => {
    group = new ProcessGroup();
    const sim = await new SimProcess(group, {}).start();
    const dir = group.tempDir('runner-enrolment-');
    const codeKeyFile = join(dir, 'code.key');
    writeFileSync(codeKeyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      users: { file: join(dir, 'users.json'), codeKeyFile },
    }).start();
    const code = /enrolment code: (\S+)/.exec(
      await relay.users('add', 'reception', '--extension', '102'),
    )![1]!;
    const codeFile = join(dir, 'enrol.code');
    writeFileSync(codeFile, `${code}\n`, { mode: 0o600 });
    const credentialFile = join(dir, 'credential.json');
    const env = envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']);
    const relayFlags = [
      '--relay-url',
      relay.url.replace(/^http/, 'ws'),
      '--relay-tenant',
      sim.tenant,
      '--credential-file',
      credentialFile,
    ];

    // First run: the code from a file.
    const first = new RunnerProcess(
      await group.spawnRunner('first', [...relayFlags, '--enrol-file', codeFile], { env }),
    );
    await first.waitForState('connected', 60_000);
    expect(first.lines.find((l) => l.type === 'signed-in')).toMatchObject({ user: 'reception' });
    const cmdline = readFileSync(`/proc/${first.proc.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('--enrol-file');
    expect(cmdline).not.toContain(code);
    expect(statSync(credentialFile).mode & 0o777).toBe(0o600);
    const stored = readFileSync(credentialFile, 'utf8');
    expect(stored).toMatch(/sprd_/);
    expect(stored).not.toContain(code);
    expect((await first.proc.stop()).code).toBe(0);

    // A restart: no code at all; the credential file signs it in.
    const second = new RunnerProcess(await group.spawnRunner('second', relayFlags, { env }));
    await second.waitForState('connected', 60_000);
    expect(second.lines.find((l) => l.type === 'signed-in')).toMatchObject({ user: 'reception' });
    expect((await second.proc.stop()).code).toBe(0);

    // Readable by the group: refused before anything connects, with what to do.
    chmodSync(credentialFile, 0o640);
    const exposed = await group.spawnRunner('exposed', relayFlags, { env }).exit;
    expect(exposed.code).toBe(2);
    const said = group.describe();
    expect(said).toContain('the credential file cannot be used');
    expect(said).toContain('mode 640: others may read it (chmod 600');
    chmodSync(credentialFile, 0o600);

    // A second device of the user: the code on standard input (`--enrol -`), as a script pipes it.
    const second2 = /enrolment code: (\S+)/.exec(await relay.users('code', 'reception'))![1]!;
    const otherFile = join(dir, 'other.json');
    const child = spawn(NODE, [RUNNER, ...relayFlags.slice(0, -1), otherFile, '--enrol', '-'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    group.adopt(child.pid!);
    child.stdin.end(`${second2}\n`);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('"state":"connected"'), 'the stdin-enrolled runner', 60_000);
    expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')).not.toContain(second2);
    expect(statSync(otherFile).mode & 0o777).toBe(0o600);
    child.kill('SIGTERM');
  });

  it('warns that a code given on the command line can be read by others, and still enrols', async () => {
    await ensureRunnerBuilt();
    group = new ProcessGroup();
    const sim = await new SimProcess(group, {}).start();
    const dir = group.tempDir('runner-enrolment-');
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      users: { file: join(dir, 'users.json') },
    }).start();
    const code = /enrolment code: (\S+)/.exec(
      await relay.users('add', 'reception', '--extension', '102'),
    )![1]!;
    const env = envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']);
    const runner = new RunnerProcess(
      await group.spawnRunner(
        'argv',
        [
          '--relay-url',
          relay.url.replace(/^http/, 'ws'),
          '--relay-tenant',
          sim.tenant,
          '--enrol',
          code,
        ],
        { env },
      ),
    );
    await runner.waitForState('connected', 60_000);
    expect(runner.proc.describe()).toContain(
      'the enrolment code on the command line can be read by other users of this computer',
    );
  });
});
