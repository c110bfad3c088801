// Issue 20, item 1 (Windows): a policy file any user of a shared PC could write applied to everyone.
// The decision is tested on constructed Get-Acl output (test/fixtures/windows-acl/README.md says
// what each file stands for); the real powershell.exe runs only on Windows.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, win32 } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import {
  loadPolicy,
  machinePolicyChecks,
  policyPath,
} from '../../src-main/core/settings/policy.ts';
import {
  GET_ACL_ARGS,
  GET_ACL_SCRIPT,
  parseSddl,
  POWERSHELL_EXE,
  sddlTrust,
  windowsPolicyTrust,
  type RunTool,
} from '../../src-main/core/settings/windows-acl.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('screenpop-winacl-');
const FIXTURES = new URL('../fixtures/windows-acl/', import.meta.url);
const fixture = (name: string) =>
  readFileSync(new URL(`constructed-${name}.txt`, FIXTURES), 'utf8');

const FILE = policyPath('win32');
const FOLDER = win32.dirname(FILE);
const USER = 'S-1-5-21-3623811015-3361044348-30300820';
const EVERY_WRITE =
  'write data / create files, append data / create folders, delete what is inside, delete, change permissions, take ownership';

/** PowerShell as recorded: every call answers `output` (or fails with `failure`). */
function recorded(output: string | Error): { run: RunTool; calls: Parameters<RunTool>[] } {
  const calls: Parameters<RunTool>[] = [];
  return {
    calls,
    run: (...args) => {
      calls.push(args);
      return output instanceof Error ? Promise.reject(output) : Promise.resolve(output);
    },
  };
}

/** The policy at a real file, judged by the Windows rule on `output`: applied, and the log's why. */
async function judged(output: string | Error) {
  const path = join(tmp.path, 'policy.json');
  await writeFile(path, JSON.stringify({ managedBy: 'Planted IT', locked: ['startAtLogin'] }));
  const log = memoryLogger();
  const { run, calls } = recorded(output);
  const policy = await loadPolicy(path, log, { trust: windowsPolicyTrust(run) });
  const refusal = log.records.find((r) => r.level === 'error');
  return {
    applied: policy.source !== null,
    msg: refusal?.msg,
    why: refusal?.why as string | undefined,
    calls,
  };
}

describe('the Windows policy trust rule, on Get-Acl output', () => {
  it.each([['installer-admin-only'], ['trustedinstaller-owner'], ['deny-guests']])(
    '%s: trusted',
    (name) => {
      const [file, folder] = fixture(name).split('\r\n');
      expect(sddlTrust('the policy file', file!)).toBeNull();
      expect(sddlTrust('the folder', folder!)).toBeNull();
    },
  );

  it.each([
    [
      'programdata-default-subfolder',
      `the folder ${FOLDER} lets Users (BU) write data / create files, append data / create folders`,
    ],
    [
      'user-planted',
      `the policy file ${FILE} is owned by the account ${USER}-1001, not by SYSTEM, Administrators or TrustedInstaller`,
    ],
    [
      'admin-account-owner',
      `the policy file ${FILE} is owned by the account ${USER}-1000, not by SYSTEM, Administrators or TrustedInstaller`,
    ],
    ['everyone-full', `the policy file ${FILE} lets Everyone (WD) ${EVERY_WRITE}`],
    [
      'authenticated-users-modify',
      `the policy file ${FILE} lets Authenticated Users (AU) write data / create files, append data / create folders, delete`,
    ],
    ['deny-users-allow-everyone', `the policy file ${FILE} lets Everyone (WD) ${EVERY_WRITE}`],
    ['null-dacl', `the policy file ${FILE} has no access list, which lets every user write it`],
    [
      'malformed',
      `the permissions of the policy file ${FILE} could not be read (unbalanced parentheses)`,
    ],
    [
      'not-sddl',
      `the permissions of the policy file ${FILE} could not be read (not SDDL: "Cannot process argument becaus")`,
    ],
  ])('%s: ignored, the log says why', async (name, why) => {
    const r = await judged(fixture(name));
    expect(r.applied).toBe(false);
    expect(r.msg).toBe(
      'the policy file could have been written by a user who is not an administrator; it is ignored',
    );
    // The reason names the fixed path the tool was asked about (the test's file stands in for it).
    expect(
      r.why?.replaceAll(join(tmp.path, 'policy.json'), FILE).replaceAll(tmp.path, FOLDER),
    ).toBe(why);
  });

  it('applies the policy in the installer-made folder', async () => {
    const r = await judged(fixture('installer-admin-only'));
    expect(r.applied).toBe(true);
    expect(r.msg).toBeUndefined();
  });

  it('reads rights as two-letter codes or masks, numeric SIDs as their names, and fails closed', () => {
    // The same grants written the other ways Windows may print them.
    expect(
      sddlTrust('f', 'O:S-1-5-32-544D:P(A;OICI;0x1f01ff;;;S-1-5-18)(A;;GRGX;;;S-1-5-32-545)'),
    ).toBeNull();
    for (const rights of [
      'FW',
      'GW',
      'GA',
      'WD',
      'WO',
      'SD',
      'DC',
      'LC',
      'DT',
      '0x2',
      '0x10000000',
    ])
      expect(sddlTrust('f', `O:BAD:P(A;;FA;;;BA)(A;;${rights};;;BU)`), rights).toMatch(
        /^f lets Users \(BU\) /,
      );
    // Read, execute, write attributes: nothing that changes the policy.
    expect(sddlTrust('f', 'O:BAD:P(A;;FRFXCR;;;WD)')).toBeNull();
    // An inherit-only entry does not apply to the object itself (its children are judged).
    expect(sddlTrust('f', 'O:BAD:P(A;OICIIO;FA;;;BU)')).toBeNull();
    // CREATOR OWNER / OWNER RIGHTS stand for the (administrator) owner.
    expect(sddlTrust('f', 'O:SYD:P(A;;FA;;;CO)(A;;FA;;;OW)')).toBeNull();
    // A conditional allow counts as an allow.
    expect(sddlTrust('f', 'O:BAD:(XA;;FA;;;WD;(Member_of {SID(BU)}))')).toMatch(/lets Everyone/);
    // What the rule cannot read refuses.
    expect(sddlTrust('f', 'O:BAD:(A;;ZZ;;;BU)')).toBe(
      'the permissions of f could not be read ("ZZ" is not a known right)',
    );
    expect(sddlTrust('f', 'O:BA')).toBe('the permissions of f could not be read (no access list)');
    expect(sddlTrust('f', 'D:P(A;;FA;;;BA)')).toBe(
      'the permissions of f could not be read (no owner)',
    );
    expect(sddlTrust('f', '')).toBe(
      'the permissions of f could not be read (no owner and no DACL)',
    );
    expect(parseSddl('O:SYG:SYD:PAI(A;OICI;FA;;;SY)S:AI(AU;SA;FA;;;WD)')).toEqual({
      owner: 'SY',
      dacl: [{ type: 'A', flags: ['OI', 'CI'], mask: 0x1f01ff, sid: 'SY' }],
    });
  });
});

describe('reading the ACL with PowerShell', () => {
  it('runs powershell.exe by its fixed path, with the paths in an environment of its own', async () => {
    const saved = { SystemRoot: process.env.SystemRoot, PSModulePath: process.env.PSModulePath };
    process.env.SystemRoot = 'D:\\Planted';
    process.env.PSModulePath = 'D:\\Planted\\Modules';
    try {
      const { run, calls } = recorded(fixture('installer-admin-only'));
      expect(await windowsPolicyTrust(run)(FILE, { uid: 0, gid: 0, mode: 0 })).toBeNull();
      expect(calls).toEqual([
        [
          'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
          GET_ACL_ARGS,
          {
            SCREENPOP_ACL_FILE: FILE,
            SCREENPOP_ACL_FOLDER: 'C:\\ProgramData\\Screenpop',
            SystemRoot: 'C:\\Windows',
            windir: 'C:\\Windows',
            PSModulePath: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\Modules',
          },
        ],
      ]);
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
    expect(POWERSHELL_EXE).toBe('C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    // The script travels encoded (no quoting), names no path, and loads Get-Acl from $PSHOME.
    expect(GET_ACL_ARGS.slice(0, 4)).toEqual([
      '-NoLogo',
      '-NoProfile',
      '-NonInteractive',
      '-EncodedCommand',
    ]);
    expect(Buffer.from(GET_ACL_ARGS[4]!, 'base64').toString('utf16le')).toBe(GET_ACL_SCRIPT);
    expect(GET_ACL_SCRIPT).toContain('"$PSHOME\\Modules\\Microsoft.PowerShell.Security\\');
    expect(GET_ACL_SCRIPT).toContain('-LiteralPath $p');
    expect(GET_ACL_SCRIPT).not.toMatch(/ProgramData|Screenpop\\/);
  });

  it('a tool that fails, is missing, times out or says too little: ignored, saying why', async () => {
    const failed = await judged(
      Object.assign(new Error('Command failed'), {
        code: 1,
        stderr:
          "Get-Acl : Cannot find path 'C:\\ProgramData\\Screenpop' because it does not exist.\r\nAt line:3 char:50\r\n",
      }),
    );
    expect(failed.applied).toBe(false);
    expect(failed.why).toMatch(
      /could not be read \(powershell\.exe exited with 1: Get-Acl : Cannot find path 'C:\\ProgramData\\Screenpop' because it does not exist\.\)$/,
    );
    const missing = await judged(Object.assign(new Error('spawn'), { code: 'ENOENT' }));
    expect(missing.why).toMatch(
      /could not be read \(C:\\Windows\\.*\\powershell\.exe was not found\)$/,
    );
    const slow = await judged(
      Object.assign(new Error('killed'), { killed: true, signal: 'SIGTERM' }),
    );
    expect(slow.why).toMatch(/\(powershell\.exe did not answer within 15 s\)$/);
    const short = await judged('O:BAG:SYD:PAI(A;OICI;FA;;;SY)\r\n');
    expect(short.why).toMatch(/\(powershell\.exe gave 1 lines, not 2\)$/);
    for (const r of [failed, missing, slow, short]) expect(r.applied).toBe(false);
  });

  // The real tool: only where it exists. Elsewhere the real runner meets a missing powershell.exe.
  const onWindows = process.platform === 'win32';
  if (!onWindows)
    console.warn(
      'windows-acl: not Windows, so the real powershell.exe was NOT run; the rule was tested on constructed Get-Acl output only',
    );
  it.runIf(onWindows)('Windows: a file this user wrote in the temp folder is refused', async () => {
    const path = join(tmp.path, 'policy.json');
    await writeFile(path, '{}');
    expect(await windowsPolicyTrust()(path, { uid: 0, gid: 0, mode: 0 })).toMatch(
      /is owned by the account S-1-5-21-|lets /,
    );
  });
  it.skipIf(onWindows)(
    'not Windows: the real runner finds no powershell.exe, and refuses',
    async () => {
      const missing = `the permissions of ${FILE} and ${FOLDER} could not be read (${POWERSHELL_EXE} was not found)`;
      expect(await windowsPolicyTrust()(FILE, { uid: 0, gid: 0, mode: 0 })).toBe(missing);
      // The OS's own policy file on Windows is judged by this rule (the registry is read first).
      const windows = machinePolicyChecks('win32');
      expect(windows.registry).toBeTypeOf('function');
      expect(await windows.trust(FILE, { uid: 0, gid: 0, mode: 0 })).toBe(missing);
    },
  );
});
