// Issue 20, item 1 (Windows): nothing made C:\ProgramData\Screenpop administrators-only, so any
// user could create it and plant a policy. assets/installer.nsh does, in an all-users install.
// No Windows and no makensis here: this checks what electron-builder picks up and that the ACL
// the include's icacls lines leave is one the app's rule (windows-acl.ts) accepts; a real
// Windows must run the installer (README of this note says what to check).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { policyPath } from '../../src-main/core/settings/policy.ts';
import { sddlTrust } from '../../src-main/core/settings/windows-acl.ts';
import { INSTALL_SCOPE_FILE, parseInstallScope } from '../../src-main/core/updates/install-kind.ts';
import { TOAST_ACTIVATOR_CLSID } from '../../src-main/electron/windows-toasts.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const yaml = require('js-yaml') as { load(text: string): unknown };
const config = yaml.load(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as {
  directories: { buildResources: string };
  nsis: { include?: string };
  files: string[];
};
const FOLDER = win32.dirname(policyPath('win32'));

/** The include electron-builder uses: nsis.include, a name in buildResources (getResource). */
function includePath(): string {
  const name = config.nsis.include;
  expect(name).toBeTypeOf('string');
  return join(root, config.directories.buildResources, name!);
}

/** The icacls lines of customInstall: [folder, arguments] each. */
function icaclsLines(nsh: string): Array<{ folder: string; args: string[] }> {
  return [
    ...nsh.matchAll(/^\s*nsExec::ExecToLog '"\$SYSDIR\\icacls\.exe" "([^"]+)" ([^']+)'$/gm),
  ].map((m) => ({ folder: m[1]!, args: m[2]!.trim().split(/\s+/) }));
}

const ICACLS_RIGHTS: Record<string, string> = { F: 'FA', M: '0x1301bf', RX: '0x1200a9', R: 'FR' };
const ICACLS_SIDS: Record<string, string> = {
  '*S-1-5-18': 'SY',
  '*S-1-5-32-544': 'BA',
  '*S-1-5-32-545': 'BU',
  '*S-1-1-0': 'WD',
  '*S-1-5-11': 'AU',
};

/**
 * The SDDL Get-Acl would print after these icacls commands on a folder that inherited
 * ProgramData's entries (as Windows writes them: a protected DACL once inheritance is removed).
 */
function sddlAfter(commands: Array<{ args: string[] }>): string {
  const PROGRAMDATA_INHERITED =
    '(A;OICIIOID;GA;;;CO)(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)(A;CIID;DCLCRPCR;;;BU)';
  let owner = 'S-1-5-21-1-2-3-1001'; // an ordinary user made it before the installer ran
  let flags = 'AI';
  let aces: string[] = [`(A;;FA;;;WD)`, PROGRAMDATA_INHERITED]; // and gave Everyone full control
  for (const { args } of commands) {
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '/setowner') owner = ICACLS_SIDS[args[++i]!] ?? 'unknown';
      else if (a === '/reset') aces = [PROGRAMDATA_INHERITED];
      else if (a === '/inheritance:r') {
        flags = 'PAI';
        aces = aces.filter((ace) => !ace.includes('ID;'));
      } else if (a === '/grant:r') {
        for (; args[i + 1] && !args[i + 1]!.startsWith('/'); i++) {
          const m = /^(\*S-[\d-]+):((?:\((?:OI|CI|IO|NP)\))*)(F|M|RX|R)$/.exec(args[i + 1]!);
          if (!m) throw new Error(`not an icacls grant this test reads: ${args[i + 1]}`);
          const inherit = m[2]!.replace(/[()]/g, '');
          aces.push(`(A;${inherit};${ICACLS_RIGHTS[m[3]!]};;;${ICACLS_SIDS[m[1]!] ?? m[1]})`);
        }
      } else throw new Error(`not an icacls switch this test reads: ${a}`);
    }
  }
  return `O:${owner}G:SYD:${flags}${aces.join('')}`;
}

describe('the NSIS include that makes the policy folder administrators-only', () => {
  it('is what electron-builder picks up, and is not shipped in the app', () => {
    expect(config.directories.buildResources).toBe('assets');
    expect(existsSync(includePath())).toBe(true);
    expect(config.files).toContain('!assets/installer.nsh');
  });

  it('runs icacls by its full path in the system folder on the folder the app reads, only for all users', () => {
    const nsh = readFileSync(includePath(), 'utf8');
    expect(nsh).toMatch(/!macro customInstall\b[\s\S]*!macroend/);
    expect(nsh).toContain('${if} $installMode == "all"');
    expect(nsh).toContain(`\${andIf} $APPDATA == "${win32.dirname(FOLDER)}"`);
    expect(nsh).toContain(`CreateDirectory "${FOLDER}"`);
    const lines = icaclsLines(nsh);
    expect(lines.length).toBe(3);
    for (const line of lines) expect(line.folder).toBe(FOLDER);
    // Every command line that runs icacls runs it by the full path (no bare icacls, no %SystemRoot%).
    const code = nsh.split(/\r?\n/).filter((l) => !/^\s*;/.test(l));
    for (const l of code.filter((l) => /icacls/i.test(l)))
      expect(l).toMatch(/^\s*nsExec::ExecToLog '"\$SYSDIR\\icacls\.exe" /);
    expect(nsh).not.toMatch(/%\w+%|\$%/);
  });

  it('writes which installation this is (all users or this user) where the app reads it', () => {
    const nsh = readFileSync(includePath(), 'utf8');
    const body = /!macro customInstall\b([\s\S]*?)!macroend/.exec(nsh)![1]!;
    const scope =
      /\$\{if\} \$installMode == "all"\s+FileOpen \$0 "\$INSTDIR\\resources\\([\w-]+)" w\s+FileWrite \$0 "([\w-]+)"\s+FileClose \$0\s+\$\{else\}\s+FileOpen \$0 "\$INSTDIR\\resources\\([\w-]+)" w\s+FileWrite \$0 "([\w-]+)"\s+FileClose \$0\s+\$\{endIf\}/.exec(
        body,
      );
    expect(scope).not.toBeNull();
    expect([scope![1], scope![3]]).toEqual([INSTALL_SCOPE_FILE, INSTALL_SCOPE_FILE]);
    expect(parseInstallScope(scope![2]!)).toBe('all-users');
    expect(parseInstallScope(scope![4]!)).toBe('per-user');
  });

  it('an all-users uninstall removes the shortcut and activator key Electron wrote for the user', () => {
    const nsh = readFileSync(includePath(), 'utf8');
    const body = /!macro customUnInstall\b([\s\S]*?)!macroend/.exec(nsh)![1]!;
    expect(body).toContain('${ifNot} ${isUpdated}');
    expect(body).toContain('${andIf} $installMode == "all"');
    expect(body).toMatch(/SetShellVarContext current\s+Delete "\$SMPROGRAMS\\Screenpop\.lnk"/);
    expect(body).toContain(
      `DeleteRegKey HKCU "Software\\Classes\\CLSID\\${TOAST_ACTIVATOR_CLSID}"`,
    );
    expect(body).toMatch(/SetShellVarContext all\s+\$\{endIf\}/);
  });

  it('leaves an ACL the app accepts, even over a folder a user planted', () => {
    const nsh = readFileSync(includePath(), 'utf8');
    const after = sddlAfter(icaclsLines(nsh));
    expect(after).toBe('O:BAG:SYD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)');
    expect(sddlTrust('the folder', after)).toBeNull();
    // The same tie refuses what a slip in the include would leave.
    expect(sddlTrust('the folder', sddlAfter([]))).toMatch(/is owned by the account/);
    expect(
      sddlTrust(
        'the folder',
        sddlAfter(icaclsLines(nsh).filter((l) => !l.args.includes('/reset'))),
      ),
    ).toBe(
      'the folder lets Everyone (WD) write data / create files, append data / create folders, delete what is inside, delete, change permissions, take ownership',
    );
    expect(
      sddlTrust(
        'the folder',
        sddlAfter(icaclsLines(nsh.replace('*S-1-5-32-545:(OI)(CI)RX', '*S-1-5-32-545:(OI)(CI)M'))),
      ),
    ).toMatch(/^the folder lets Users \(BU\) write data/);
  });
});
