import { spawnSync } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnProgramRunner } from '../../src-main/core/ring-actions/program-runner.ts';
import { fillArgument, RingActions } from '../../src-main/core/ring-actions/ring-actions.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { validatePolicy } from '../../src-main/core/settings/policy.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('screenpop-ring-');

const HOSTILE = [
  '"; touch /tmp/pwned; echo "',
  "$(touch /tmp/pwned) `id` & calc.exe | rm -rf ~ ; '",
  '--output=/etc/passwd',
  'a b\tc\nd\r\ne\u0000f',
  '../../x?y=1&z#frag',
  '%s%n {from} {caller_name}',
];

function actionsFrom(onRing: unknown[]) {
  const { policy, problems } = validatePolicy({ onRing });
  expect(problems).toEqual([]);
  return policy.onRing;
}

describe('fillArgument', () => {
  it('keeps each value inside its own argument, without controls or a leading option dash', () => {
    for (const name of HOSTILE) {
      const arg = fillArgument('--name={caller_name}', {
        from: '+1',
        to: '101',
        call_id: 'c',
        caller_name: name,
      });
      expect(arg.startsWith('--name=')).toBe(true);
      // eslint-disable-next-line no-control-regex
      expect(arg).not.toMatch(/[\u0000-\u001f]/);
    }
    expect(
      fillArgument('{caller_name}', {
        from: '',
        to: '',
        call_id: '',
        caller_name: '--output=/etc/x',
      }),
    ).toBe('output=/etc/x');
    // A value holding a placeholder is not filled a second time.
    expect(
      fillArgument('{from}', { from: '{caller_name}', to: '', call_id: '', caller_name: 'Z' }),
    ).toBe('{caller_name}');
  });
});

describe('fillArgument judges the finished argument', () => {
  it('never starts an argument with "-" or "/" the administrator did not write, wherever the placeholders sit', () => {
    const templates = [
      '{caller_name}{from}',
      '{from}{caller_name}',
      '{caller_name}-{from}',
      '{caller_name}/{from}',
      '{caller_name}{to}{from}',
      '{call_id}',
      'x{from}',
    ];
    const hostile = [
      '-rf',
      '--output=/etc/passwd',
      '/delete',
      ' -x',
      '\u200b-x',
      '\u202e-x',
      '\u0000-x',
    ];
    const names = ['', '-', '--', ' ', 'Ann', '-Ann', '/s', '\u0000-'];
    let checked = 0;
    for (const template of templates)
      for (const from of [...hostile, '+14155550123'])
        for (const caller_name of names)
          for (const call_id of ['c-1', '-c']) {
            const arg = fillArgument(template, { from, to: '', call_id, caller_name });
            expect(arg, JSON.stringify({ template, from, caller_name })).not.toMatch(/^[-/]/);
            checked++;
          }
    expect(checked).toBe(7 * 8 * 8 * 2);
    // The administrator's own leading dash stays; the value inside it is as given.
    expect(
      fillArgument('--from={from}', { from: '-rf', to: '', call_id: '', caller_name: '' }),
    ).toBe('--from=-rf');
    expect(
      fillArgument('{caller_name}{from}', { from: '-rf', to: '', call_id: '', caller_name: '' }),
    ).toBe('rf');
    expect(
      fillArgument('{caller_name}{from}', {
        from: '+14155550123',
        to: '',
        call_id: '',
        caller_name: 'Ann ',
      }),
    ).toBe('Ann+14155550123');
  });
});

describe('RingActions with a real program (no shell)', () => {
  it('a hostile caller name reaches the program as the one argument it was given, never as a command', async () => {
    if (process.platform === 'win32') return;
    const out = join(tmp.path, 'argv.json');
    const marker = join(tmp.path, 'pwned');
    const program = join(tmp.path, 'record-args');
    // The program records its argv as JSON (node, so no shell is involved in reading it either).
    await writeFile(
      program,
      `#!${process.execPath}\nrequire('fs').appendFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`,
    );
    await chmod(program, 0o755);
    const actions = actionsFrom([
      { run: program, args: ['--from', '{from}', '--name', '{caller_name}', 'id={call_id}'] },
    ]);
    const log = memoryLogger();
    const ring = new RingActions({
      actions,
      urlOpener: { open: () => {} },
      runner: spawnProgramRunner(log, 10_000),
      logger: log,
      allowedSchemes: () => ['https'],
    });
    const names = [...HOSTILE.map((h) => h.replace('/tmp/pwned', marker)), `$(touch ${marker})`];
    for (const caller_name of names)
      ring.run(
        { from: `+1415555${caller_name.length}`, to: '101', call_id: 'c-1', caller_name },
        { openLinks: false },
      );
    const deadline = Date.now() + 10_000;
    let lines: string[] = [];
    while (Date.now() < deadline) {
      lines = (await readFile(out, 'utf8').catch(() => '')).split('\n').filter(Boolean);
      if (lines.length === names.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const argvs = lines.map((l) => JSON.parse(l) as string[]);
    expect(argvs).toHaveLength(names.length);
    for (const argv of argvs) {
      expect(argv).toHaveLength(5);
      expect(argv[0]).toBe('--from');
      expect(argv[2]).toBe('--name');
      expect(argv[4]).toBe('id=c-1');
    }
    const got = argvs.map((a) => a[3]).sort();
    const want = names
      .map((n) => fillArgument('{caller_name}', { from: '', to: '', call_id: '', caller_name: n }))
      .sort();
    expect(got).toEqual(want);
    expect(spawnSync('test', ['-e', marker]).status).not.toBe(0);
  });

  it('a link is built by the CRM builder (each value encoded) and skipped in Do Not Disturb', () => {
    const opened: string[] = [];
    const ring = new RingActions({
      actions: actionsFrom([
        { openUrl: 'https://intranet.example.com/who/{caller_name}?n={from}' },
      ]),
      urlOpener: { open: (u) => void opened.push(u) },
      runner: {
        run: () => {
          throw new Error('not expected');
        },
        stopAll: () => Promise.resolve(),
        running: () => 0,
      },
      logger: memoryLogger(),
      allowedSchemes: () => ['https'],
    });
    ring.run(
      { from: '+1 415&x=1#y', to: '101', call_id: 'c', caller_name: '../admin?evil=1' },
      { openLinks: true },
    );
    ring.run({ from: '+1', to: '101', call_id: 'c', caller_name: 'A' }, { openLinks: false });
    expect(opened).toEqual([
      'https://intranet.example.com/who/..%2Fadmin%3Fevil%3D1?n=%2B1%20415%26x%3D1%23y',
    ]);
    const url = new URL(opened[0] ?? '');
    expect(url.host).toBe('intranet.example.com');
    expect(url.searchParams.get('n')).toBe('+1 415&x=1#y');
  });

  it('a program that cannot start is logged; the next action still runs', async () => {
    const log = memoryLogger();
    const opened: string[] = [];
    const ring = new RingActions({
      actions: actionsFrom([
        { run: join(tmp.path, 'no-such-program'), args: [] },
        { openUrl: 'https://intranet.example.com/?n={from}' },
      ]),
      urlOpener: { open: (u) => void opened.push(u) },
      runner: spawnProgramRunner(log),
      logger: log,
      allowedSchemes: () => ['https'],
    });
    ring.run({ from: '1', to: '2', call_id: 'c', caller_name: '' }, { openLinks: true });
    expect(opened).toHaveLength(1);
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !log.records.some((r) => r.msg.includes('could not start')))
      await new Promise((r) => setTimeout(r, 20));
    expect(log.records.map((r) => r.msg)).toContain('ring action: program could not start');
  });
});

describe('admin actions come only from the policy', () => {
  it('settings.json cannot carry them: onRing is not a setting', async () => {
    const { validateSettings } = await import('../../src-main/core/settings/validate-settings.ts');
    const r = validateSettings({ onRing: [{ run: '/bin/sh', args: ['-c', 'id'] }] });
    expect(r.settings).not.toHaveProperty('onRing');
    expect(r.problems.map((p) => p.field)).toEqual(['onRing']);
  });
});
