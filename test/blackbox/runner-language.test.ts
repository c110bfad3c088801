/**
 * Black box: the real `screenpop-headless` in other languages. Its human words (the help, a status
 * line's reason) follow --lang, else LANG; the JSON keys, states and codes never change. In the
 * pseudo-locale every word it prints comes from the catalogue: an ASCII letter left in a reason is
 * a string that skipped it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { envWithout, ProcessGroup } from '../../rigs/processes.ts';
import { RunnerProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

const plainEnv = () => envWithout(['LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'LANG']);

async function reasonsOf(args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const runner = new RunnerProcess(await group.spawnRunner('runner', ['--demo', ...args], { env }));
  await runner.waitForState('connected', 20_000);
  runner.proc.signal('SIGTERM');
  expect(await runner.proc.exit).toEqual({ code: 0, signal: null });
  expect(runner.badLines).toEqual([]);
  return runner
    .statuses()
    .map((l) => l.reason)
    .filter((r): r is string => typeof r === 'string');
}

describe('screenpop-headless in the user’s language', () => {
  it(
    '--lang en-XA: every reason it prints comes from the catalogue',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      const reasons = await reasonsOf(['--lang', 'en-XA'], plainEnv());
      expect(reasons.length).toBeGreaterThan(0);
      expect(reasons.filter((r) => /[A-Za-z]/.test(r))).toEqual([]);
    },
  );

  it('follows LANG when --lang is not given', { timeout: 60_000 }, async () => {
    group = new ProcessGroup();
    const reasons = await reasonsOf([], { ...plainEnv(), LANG: 'de_DE.UTF-8' });
    expect(reasons).toContain('Verbindung zum Dienst wird hergestellt.');
  });

  it(
    'prints its help in Arabic, and refuses a language it does not ship',
    { timeout: 30_000 },
    async () => {
      group = new ProcessGroup();
      const help = await group.spawnRunner('help', ['--help', '--lang', 'ar'], { env: plainEnv() });
      expect(await help.exit).toEqual({ code: 0, signal: null });
      const out = help.stdout.map((l) => l.text).join('\n');
      expect(out).toContain('الاستخدام: screenpop-headless --base-url');
      expect(out).toContain('رموز الخروج');
      const bad = await group.spawnRunner('bad', ['--lang', 'xx'], { env: plainEnv() });
      expect(await bad.exit).toEqual({ code: 2, signal: null });
      expect(bad.stderr()).toContain('--lang must be one of en, de, fr, es, ar, en-XA: xx');
    },
  );

  it(
    'says its usage errors in the chosen language: its own, node’s parser’s and the settings rules’',
    { timeout: 60_000 },
    async () => {
      group = new ProcessGroup();
      const said = async (name: string, args: string[]): Promise<string> => {
        const run = await group.spawnRunner(name, args, { env: plainEnv() });
        expect(await run.exit).toEqual({ code: 2, signal: null });
        return (
          run
            .stderr()
            .split('\n')
            .find((l) => l.startsWith('screenpop-headless: ')) ?? ''
        );
      };
      const base = ['--base-url', 'https://acme.example.com', '--extension', '101'];
      // The settings' rule, named by the flag (the Settings window's German words).
      expect(await said('stale', ['--lang', 'de', ...base, '--stale-ring-sec', '2.5'])).toBe(
        'screenpop-headless: --stale-ring-sec: muss eine ganze Zahl von 5 bis 3600 Sekunden sein',
      );
      expect(await said('unknown', ['--lang', 'de', '--demo', '--bogus'])).toBe(
        'screenpop-headless: --bogus ist keine Option von screenpop-headless (siehe --help)',
      );
      expect(await said('missing', ['--lang', 'fr', '--demo', '--base-url'])).toBe(
        'screenpop-headless: --base-url demande une valeur',
      );
      expect(await said('nothing', ['--lang=es', '--base-url', 'https://acme.example.com'])).toBe(
        'screenpop-headless: indique al menos un --extension o un --did',
      );
      const arabic = await said('insecure', [
        '--lang',
        'ar',
        '--base-url',
        'http://acme.example.com',
        '--extension',
        '101',
      ]);
      expect(arabic).toMatch(/[\u0600-\u06ff]/);
      expect(arabic).toContain('https://');
      // Words that would send a runner user to Settings name its flag and variable instead.
      const crm = await said('crm', [
        '--lang',
        'de',
        '--demo',
        '--crm',
        'generic',
        '--crm-url',
        'https://u:p@crm.example.com/lookup?phone={number}',
      ]);
      expect(crm).toContain('--crm-auth basic');
      expect(crm).toContain('SCREENPOP_CRM_TOKEN');
      expect(crm).not.toContain('Einstellungen');
      // In the pseudo-locale every word comes from the catalogue: no English word is left bare.
      const pseudo = await said('pseudo', ['--lang', 'en-XA', ...base, '--heartbeat-sec', '99']);
      expect(pseudo.replace(/^screenpop-headless: /, '').replace(/--[a-z-]+|\d+/g, '')).not.toMatch(
        /[A-Za-z]{2,}/,
      );
    },
  );
});
