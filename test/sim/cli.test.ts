import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../rigs/wait.ts';

const CLI = fileURLToPath(new URL('../../src-sim/cli.ts', import.meta.url));

/** Starts the CLI with Node 24 (process.execPath under `npm exec`) and collects stdout until `done`. */
function startCli(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = async (until: RegExp) => {
    await waitFor(() => until.test(stdout), `the CLI to print ${until}`, {
      timeoutMs: 15_000,
      detail: () => `stdout: ${stdout} stderr: ${stderr}`,
    });
    return stdout;
  };
  return { child, output, exited, stderr: () => stderr };
}

describe('simulator CLI', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
  });

  it('starts, prints base URL, key and secret on stdout, serves them, and stops on SIGTERM', async () => {
    const cli = startCli([
      '--port',
      '0',
      '--seed',
      '42',
      '--extensions',
      '120',
      '--control',
      '--traffic',
      '50',
    ]);
    child = cli.child;
    const out = await cli.output(/Press Ctrl\+C/);
    const baseUrl = /Base URL:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    const key = /API key:\s+(\S+)/.exec(out)?.[1];
    const secret = /API secret:\s+(\S+)/.exec(out)?.[1];
    expect(baseUrl && key && secret).toBeTruthy();
    const token = await fetch(`${baseUrl}/openapi/v1.0/get_token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: key, password: secret }),
    });
    expect(token.status).toBe(200);
    const info = (await (await fetch(`${baseUrl}/_sim/info`)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ errcode: 0, extensions: 120, apiKey: { key, secret } });
    const deadline = Date.now() + 5000;
    let sent = 0;
    while (sent === 0 && Date.now() < deadline) {
      const stats = (await (await fetch(`${baseUrl}/_sim/stats`)).json()) as {
        stats: { eventsSent: number };
      };
      sent = stats.stats.eventsSent;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sent).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('prints the same credentials for the same seed, and keeps the control surface off by default', async () => {
    const a = startCli(['--port', '0', '--seed', '9']);
    child = a.child;
    const outA = await a.output(/Press Ctrl\+C/);
    const baseUrl = /Base URL:\s+(\S+)/.exec(outA)?.[1];
    expect((await fetch(`${baseUrl}/_sim/info`)).status).toBe(404);
    a.child.kill('SIGTERM');
    await a.exited;
    const b = startCli(['--port', '0', '--seed', '9']);
    child = b.child;
    const outB = await b.output(/Press Ctrl\+C/);
    const creds = (s: string) => [
      /API key:\s+(\S+)/.exec(s)?.[1],
      /API secret:\s+(\S+)/.exec(s)?.[1],
    ];
    expect(creds(outB)).toEqual(creds(outA));
    b.child.kill('SIGTERM');
    await b.exited;
  });

  it('--report-style member: a Yeastar simulator says which reports it sends', async () => {
    const cli = startCli([
      '--port',
      '0',
      '--phone-system',
      'yeastar-p-series',
      '--report-style',
      'member',
    ]);
    child = cli.child;
    const out = await cli.output(/Press Ctrl\+C/);
    expect(out).toMatch(/Reports:\s+member\n/);
    child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('a Yeastar simulator sends member-style reports unless told otherwise (issue 32 item 8)', async () => {
    const cli = startCli(['--port', '0', '--phone-system', 'yeastar-p-series']);
    child = cli.child;
    const out = await cli.output(/Press Ctrl\+C/);
    expect(out).toMatch(/Reports:\s+member\n/);
    child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('refuses an unknown --report-style, and one without --phone-system yeastar-p-series', async () => {
    const bad = startCli(['--phone-system', 'yeastar-p-series', '--report-style', 'members']);
    child = bad.child;
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toMatch(/invalid --report-style: members/);
    const standard = startCli(['--report-style', 'member']);
    child = standard.child;
    expect(await standard.exited).toBe(2);
    expect(standard.stderr()).toMatch(/--report-style goes with --phone-system yeastar-p-series/);
  });

  it('refuses bad flags with exit code 2', async () => {
    const cli = startCli(['--timestamp-unit', 'ns']);
    child = cli.child;
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toMatch(/timestamp-unit/);
  });
});
