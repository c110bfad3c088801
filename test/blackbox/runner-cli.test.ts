/**
 * Black box: the real `screenpop-headless` as a newcomer meets it. Pointed at a web server that is
 * not the phone system, it stops with needs-attention saying what answers there (exit 3), where it
 * used to call it a malformed request of its own and retry for ever; its remedies name its flags
 * and environment, never the app's Settings window.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { envWithout, ProcessGroup, REPO } from '../../rigs/processes.ts';
import { RunnerProcess, startRunner } from './services.ts';
import { otherWebServer, type OtherWebServer } from '../support/other-web-server.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGE = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };

let group: ProcessGroup;
let web: OtherWebServer | undefined;
afterEach(async () => {
  await group?.cleanup();
  await web?.close();
  web = undefined;
});

const plainEnv = () => envWithout(['LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'LANG']);

describe('screenpop-headless pointed at a web server that is not the phone system', () => {
  it(
    'stops with needs-attention naming what answers there, exit 3',
    { timeout: 30_000 },
    async () => {
      group = new ProcessGroup();
      web = await otherWebServer();
      const runner = await startRunner(group, {
        baseUrl: web.baseUrl,
        key: 'k',
        secret: 's',
        env: plainEnv(),
      });
      expect(await runner.proc.exit).toEqual({ code: 3, signal: null });
      expect(runner.lines.at(-1)).toEqual({
        type: 'status',
        state: 'needs-attention',
        reason: `${web.host} answered, but not as the phone system's API: HTTP 404 with a web page titled “404 Not Found”.`,
        remedy:
          "Check --base-url: it is your phone system's own address (as its admin console shows it), not another web server's.",
        errcode: null,
        at: expect.any(Number),
      });
      // One question was enough: no retry loop against somebody else's server.
      expect(web.requests.filter((p) => p.endsWith('/get_token')).length).toBeLessThanOrEqual(2);
    },
  );

  it('says so in the --lang language, naming the flag', { timeout: 30_000 }, async () => {
    group = new ProcessGroup();
    web = await otherWebServer();
    const runner = await startRunner(group, {
      baseUrl: web.baseUrl,
      key: 'k',
      secret: 's',
      args: ['--lang', 'de'],
      env: plainEnv(),
    });
    expect((await runner.proc.exit).code).toBe(3);
    expect(runner.lines.at(-1)).toMatchObject({
      state: 'needs-attention',
      reason: `${web.host} antwortet, aber nicht als API der Telefonanlage: HTTP 404 mit einer Webseite mit dem Titel „404 Not Found“.`,
      remedy: expect.stringMatching(/^Prüfen Sie --base-url: /),
    });
  });
});

describe('screenpop-headless on the command line', () => {
  it('--help: the help on stdout and nothing else, exit 0', { timeout: 30_000 }, async () => {
    group = new ProcessGroup();
    const help = await group.spawnRunner('help', ['--help'], { env: plainEnv() });
    expect(await help.exit).toEqual({ code: 0, signal: null });
    expect(help.stderr()).toBe(''); // before: a JSON "no policy file" line, then the help
    expect(help.stdout[0]?.text).toMatch(/^Usage: screenpop-headless --base-url/);
    expect(help.stdout.map((l) => l.text).join('\n')).toContain('Exit codes:');
  });

  it(
    'a usage error is two lines on stderr: what is wrong and where the help is, nothing before it',
    { timeout: 30_000 },
    async () => {
      group = new ProcessGroup();
      // Before: the "no policy file" JSON line, the error, then the whole help (24 lines).
      for (const [name, args, env, error] of [
        [
          'unknown',
          ['--demo', '--bogus'],
          plainEnv(),
          '--bogus is not an option of screenpop-headless (see --help)',
        ],
        [
          'no key',
          ['--base-url', 'https://acme.example.com', '--extension', '101'],
          envWithout(['LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'LANG', 'SCREENPOP_API_KEY']),
          'set SCREENPOP_API_KEY (and SCREENPOP_API_SECRET, or keep the secret in the keychain)',
        ],
        [
          'bad lang',
          ['--lang', 'xx'],
          plainEnv(),
          '--lang must be one of en, de, fr, es, ar, en-XA: xx',
        ],
      ] as const) {
        const bad = await group.spawnRunner(name, [...args], { env });
        expect(await bad.exit).toEqual({ code: 2, signal: null });
        expect(bad.stdout).toEqual([]);
        expect(bad.stderr()).toBe(
          `screenpop-headless: ${error}\nEvery option: screenpop-headless --help\n`,
        );
      }
      const german = await group.spawnRunner('german', ['--lang', 'de', '--demo', '--bogus'], {
        env: plainEnv(),
      });
      expect(await german.exit).toEqual({ code: 2, signal: null });
      expect(german.stderr().split('\n')[1]).toBe('Alle Optionen: screenpop-headless --help');
    },
  );

  it('--version: the package version on stdout, exit 0', { timeout: 30_000 }, async () => {
    group = new ProcessGroup();
    const version = await group.spawnRunner('version', ['--version'], { env: plainEnv() });
    expect(await version.exit).toEqual({ code: 0, signal: null });
    expect(version.stderr()).toBe(''); // before: exit 2, "--version is not an option"
    expect(version.stdout.map((l) => l.text)).toEqual([`screenpop-headless ${PACKAGE.version}`]);
  });

  it(
    'a negative number gets the flag’s own rule, not the parser’s jargon',
    { timeout: 30_000 },
    async () => {
      group = new ProcessGroup();
      const bad = await group.spawnRunner('negative', ['--demo', '--heartbeat-sec', '-5'], {
        env: plainEnv(),
      });
      expect(await bad.exit).toEqual({ code: 2, signal: null });
      expect(bad.stdout).toEqual([]);
      expect(bad.stderr()).toContain(
        'screenpop-headless: --heartbeat-sec must be between 2 and 30',
      );
      expect(bad.stderr()).not.toContain('ambiguous');
    },
  );

  it('says "stopped" after "stopping" when it stops cleanly', { timeout: 30_000 }, async () => {
    group = new ProcessGroup();
    const runner = new RunnerProcess(
      await group.spawnRunner('demo', ['--demo'], { env: plainEnv() }),
    );
    await runner.waitForState('connected', 20_000);
    runner.proc.signal('SIGTERM');
    expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
    const logged = runner.proc
      .stderr()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(logged.slice(-2)).toEqual(['stopping', 'stopped']);
  });
});
