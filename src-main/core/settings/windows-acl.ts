/**
 * Windows: whether the policy file may be believed, from its ACL. The policy applies to every user
 * of the computer, so it is honoured only when the file and its folder could not have been written,
 * replaced or removed by anyone but the system and the administrators (policy-trust.ts has the same
 * rule for macOS and Linux). Windows' default `C:\ProgramData` lets every user create folders and
 * files (`(A;CI;DCLCRPCR;;;BU)`, inherited by every folder made under it), so a folder an ordinary
 * user made, or one that merely inherits that default, is refused; the installer makes the folder
 * administrators-only (assets/installer.nsh).
 *
 * The ACL is read as SDDL (owner and DACL) with Windows PowerShell's Get-Acl, run by its fixed full
 * path; icacls is not used to read it because it prints account names in the system's language and
 * not the owner. The decision (`sddlTrust`) is a pure function of that text, tested on Get-Acl
 * output constructed from Windows' defaults (test/fixtures/windows-acl: none recorded on Windows
 * yet); only `windowsPolicyTrust` runs the tool.
 *
 * The rule, per security descriptor:
 * - the owner (who may always rewrite the ACL) is SYSTEM, Administrators or TrustedInstaller. A file
 *   owned by one administrator's own account is refused too: whether that account is an
 *   administrator cannot be read from the descriptor (it needs the account's groups, which change),
 *   an account that stops being one keeps the ownership, and the remedy is one command
 *   (`icacls <file> /setowner *S-1-5-32-544`, README). Elevated administrators create files owned
 *   by Administrators on Windows' defaults, so this meets files moved in from a user's own folder;
 * - there is a DACL (none, `D:NO_ACCESS_CONTROL`, lets everyone do everything);
 * - no allow ACE that applies to the object itself (not inherit-only) grants anything that writes,
 *   appends, creates in, deletes, or changes the ACL or owner (`WRITE_RIGHTS`) to any account but
 *   SYSTEM, Administrators, TrustedInstaller, and CREATOR OWNER / OWNER RIGHTS (which stand for the
 *   owner, already checked). Deny ACEs are not counted in favour: an allow to Everyone is not made
 *   safe by a deny to Users (Everyone holds accounts that are not Users).
 * Anything the rule cannot read (an unknown right, ACE type or flag, text that is not SDDL) is a
 * reason to refuse: the rule fails closed.
 */
import { runSystemTool } from './system-tool.ts';
import { win32 } from 'node:path';
import type { PolicyTrust } from './policy-trust.ts';
import { SYSTEM32 } from './registry-policy.ts';

/** Windows PowerShell 5.1, which every supported Windows has, by its fixed full path. */
export const POWERSHELL_EXE = `${SYSTEM32}\\WindowsPowerShell\\v1.0\\powershell.exe`;

const TRUSTED_INSTALLER = 'S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464';
/** Accounts that may write the policy: the system and the administrators. */
const ADMINS = new Set(['SY', 'BA', TRUSTED_INSTALLER]);
/** Stand for the object's owner: as good as the owner (checked first). */
const OWNER_STAND_INS = new Set(['CO', 'OW']);

/** Well-known SIDs by number, as SDDL's two-letter names (Get-Acl prints either). */
const SID_ALIASES: Record<string, string> = {
  'S-1-5-18': 'SY',
  'S-1-5-32-544': 'BA',
  'S-1-3-0': 'CO',
  'S-1-3-4': 'OW',
  'S-1-1-0': 'WD',
  'S-1-5-32-545': 'BU',
  'S-1-5-11': 'AU',
  'S-1-5-4': 'IU',
  'S-1-5-32-546': 'BG',
  'S-1-5-7': 'AN',
};

/** How the accounts are named in a reason (Windows' English names; the SID for the rest). */
const ACCOUNT_NAMES: Record<string, string> = {
  SY: 'SYSTEM',
  BA: 'Administrators',
  CO: 'CREATOR OWNER',
  OW: 'OWNER RIGHTS',
  WD: 'Everyone',
  BU: 'Users',
  AU: 'Authenticated Users',
  IU: 'INTERACTIVE',
  BG: 'Guests',
  AN: 'ANONYMOUS LOGON',
  PU: 'Power Users',
  LS: 'LOCAL SERVICE',
  NS: 'NETWORK SERVICE',
  [TRUSTED_INSTALLER]: 'TrustedInstaller',
};

function accountName(sid: string): string {
  const name = ACCOUNT_NAMES[sid];
  return name ? `${name} (${sid})` : `the account ${sid}`;
}

/** SDDL's two-letter access rights, as masks (file objects use the DS names for their bits). */
const RIGHT_CODES: Record<string, number> = {
  GA: 0x10000000,
  GR: 0x80000000,
  GW: 0x40000000,
  GX: 0x20000000,
  RC: 0x20000,
  SD: 0x10000,
  WD: 0x40000,
  WO: 0x80000,
  RP: 0x10,
  WP: 0x20,
  CC: 0x1,
  DC: 0x2,
  LC: 0x4,
  SW: 0x8,
  LO: 0x80,
  DT: 0x40,
  CR: 0x100,
  FA: 0x1f01ff,
  FR: 0x120089,
  FW: 0x120116,
  FX: 0x1200a0,
  KA: 0xf003f,
  KR: 0x20019,
  KW: 0x20006,
  KX: 0x20019,
};

/** The rights that let someone change what the policy says, or make it go away. */
const WRITE_RIGHTS: ReadonlyArray<[number, string]> = [
  [0x2, 'write data / create files'],
  [0x4, 'append data / create folders'],
  [0x40, 'delete what is inside'],
  [0x10000, 'delete'],
  [0x40000, 'change permissions'],
  [0x80000, 'take ownership'],
  [0x2000000, 'maximum allowed'],
  [0x10000000, 'full control (generic all)'],
  [0x40000000, 'write (generic write)'],
];

const ALLOW_TYPES = new Set(['A', 'OA', 'XA', 'ZA']);
const DENY_TYPES = new Set(['D', 'OD', 'XD']);
/** Types that only audit or label (a SACL's): they grant nothing. */
const OTHER_TYPES = new Set(['AU', 'AL', 'OU', 'OL', 'ML', 'XU', 'RA', 'SP', 'SI']);
const ACE_FLAGS = new Set(['CI', 'OI', 'NP', 'IO', 'ID', 'SA', 'FA', 'TP', 'CR']);

export interface Ace {
  type: string;
  flags: string[];
  mask: number;
  sid: string;
}

export interface SecurityDescriptor {
  owner: string | null;
  /** null: no DACL in the text; 'null': a NULL DACL (everyone may do everything). */
  dacl: Ace[] | null | 'null';
}

class SddlError extends Error {}

function sidOf(text: string): string {
  const upper = text.trim().toUpperCase();
  if (/^S-1(-\d+)+$/.test(upper)) return SID_ALIASES[upper] ?? upper;
  if (/^[A-Z]{2}$/.test(upper)) return upper;
  throw new SddlError(`"${text.slice(0, 60)}" is not an account`);
}

function maskOf(text: string): number {
  const t = text.trim();
  if (/^0x[0-9a-f]{1,8}$/i.test(t)) return Number.parseInt(t.slice(2), 16);
  if (/^\d{1,10}$/.test(t)) return Number.parseInt(t, 10) >>> 0;
  if (t === '' || t.length % 2 !== 0) throw new SddlError(`"${t.slice(0, 60)}" are not rights`);
  let mask = 0;
  for (let i = 0; i < t.length; i += 2) {
    const code = RIGHT_CODES[t.slice(i, i + 2).toUpperCase()];
    if (code === undefined) throw new SddlError(`"${t.slice(i, i + 2)}" is not a known right`);
    mask = (mask | code) >>> 0;
  }
  return mask;
}

/** One ACE's text (between its parentheses): type;flags;rights;object;inherited object;account[;...]. */
function aceOf(text: string): Ace {
  const fields = splitTopLevel(text, ';');
  if (fields.length < 6) throw new SddlError(`"(${text.slice(0, 60)})" is not an ACE`);
  const type = fields[0]!.trim().toUpperCase();
  if (!ALLOW_TYPES.has(type) && !DENY_TYPES.has(type) && !OTHER_TYPES.has(type))
    throw new SddlError(`"${type.slice(0, 10)}" is not a known ACE type`);
  const flagText = fields[1]!.trim().toUpperCase();
  if (flagText.length % 2 !== 0) throw new SddlError(`"${flagText}" are not ACE flags`);
  const flags: string[] = [];
  for (let i = 0; i < flagText.length; i += 2) {
    const flag = flagText.slice(i, i + 2);
    if (!ACE_FLAGS.has(flag)) throw new SddlError(`"${flag}" is not a known ACE flag`);
    flags.push(flag);
  }
  return { type, flags, mask: maskOf(fields[2]!), sid: sidOf(fields[5]!) };
}

/** `text` split on `sep` outside parentheses (a conditional ACE's expression has its own). */
function splitTopLevel(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === sep && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

/** Parses SDDL's owner and DACL (a group or SACL is read past). Throws SddlError on anything else. */
export function parseSddl(input: string): SecurityDescriptor {
  // Get-Acl's line may come wrapped or with a byte-order mark; SDDL itself has no white space.
  const text = input
    .replace(/^\uFEFF/, '')
    .replace(/[\r\n]+/g, '')
    .trim();
  const result: SecurityDescriptor = { owner: null, dacl: null };
  let i = 0;
  const seen = new Set<string>();
  while (i < text.length) {
    const part = text.slice(i, i + 2).toUpperCase();
    if (!/^[OGDS]:$/.test(part) || seen.has(part))
      throw new SddlError(
        i === 0
          ? `not SDDL: "${text.slice(0, 30)}"`
          : `unexpected "${text.slice(i, i + 12)}" at ${i}`,
      );
    seen.add(part);
    i += 2;
    // The part runs to the next "X:" outside parentheses.
    let depth = 0;
    let end = i;
    for (; end < text.length; end++) {
      const c = text[end];
      if (c === '(') depth++;
      else if (c === ')') depth--;
      else if (depth === 0 && /[OGDS]/i.test(c ?? '') && text[end + 1] === ':') break;
    }
    if (depth !== 0) throw new SddlError('unbalanced parentheses');
    const body = text.slice(i, end);
    i = end;
    if (part === 'O:') result.owner = sidOf(body);
    else if (part === 'D:') result.dacl = daclOf(body);
  }
  if (seen.size === 0) throw new SddlError('no owner and no DACL');
  return result;
}

function daclOf(body: string): Ace[] | 'null' {
  const open = body.indexOf('(');
  const flags = (open < 0 ? body : body.slice(0, open)).toUpperCase();
  if (!/^(P|AI|AR|NO_ACCESS_CONTROL)*$/.test(flags))
    throw new SddlError(`"${flags.slice(0, 20)}" are not DACL flags`);
  if (flags.includes('NO_ACCESS_CONTROL')) return 'null';
  const aces: Ace[] = [];
  let rest = open < 0 ? '' : body.slice(open);
  while (rest.length > 0) {
    if (rest[0] !== '(') throw new SddlError(`unexpected "${rest.slice(0, 12)}" between ACEs`);
    let depth = 0;
    let end = 0;
    for (; end < rest.length; end++) {
      if (rest[end] === '(') depth++;
      else if (rest[end] === ')' && --depth === 0) break;
    }
    if (depth !== 0) throw new SddlError('unbalanced parentheses');
    aces.push(aceOf(rest.slice(1, end)));
    rest = rest.slice(end + 1);
  }
  return aces;
}

/** The words for the write rights in `mask`. */
function writeRightsIn(mask: number): string[] {
  return WRITE_RIGHTS.filter(([bit]) => (mask & bit) !== 0).map(([, words]) => words);
}

/**
 * Why the object `what` (e.g. "the policy file C:\...\policy.json") with this SDDL could be written
 * by someone who is not an administrator, or null when it could not.
 */
export function sddlTrust(what: string, sddl: string): string | null {
  let sd: SecurityDescriptor;
  try {
    sd = parseSddl(sddl);
  } catch (err) {
    if (!(err instanceof SddlError)) throw err;
    return `the permissions of ${what} could not be read (${err.message})`;
  }
  if (sd.owner === null) return `the permissions of ${what} could not be read (no owner)`;
  if (!ADMINS.has(sd.owner))
    return `${what} is owned by ${accountName(sd.owner)}, not by SYSTEM, Administrators or TrustedInstaller`;
  if (sd.dacl === null) return `the permissions of ${what} could not be read (no access list)`;
  if (sd.dacl === 'null') return `${what} has no access list, which lets every user write it`;
  for (const ace of sd.dacl) {
    if (!ALLOW_TYPES.has(ace.type) || ace.flags.includes('IO')) continue;
    if (ADMINS.has(ace.sid) || OWNER_STAND_INS.has(ace.sid)) continue;
    const rights = writeRightsIn(ace.mask);
    if (rights.length > 0) return `${what} lets ${accountName(ace.sid)} ${rights.join(', ')}`;
  }
  return null;
}

/** Runs a program with arguments and an environment of its own; gives its stdout. */
export type RunTool = (
  file: string,
  args: string[],
  env: Record<string, string>,
) => Promise<string>;

const runTool: RunTool = (file, args, env) =>
  runSystemTool(file, args, { env, timeoutMs: 15_000, maxBytes: 64 * 1024 });

/**
 * What PowerShell runs: the two paths come in the environment (never in the command's text), the
 * Security module is loaded from PowerShell's own folder (not looked up on PSModulePath), and
 * each descriptor is printed on a line of its own.
 */
export const GET_ACL_SCRIPT = [
  "$ErrorActionPreference = 'Stop'",
  'Import-Module -Name "$PSHOME\\Modules\\Microsoft.PowerShell.Security\\Microsoft.PowerShell.Security.psd1"',
  'foreach ($p in @($env:SCREENPOP_ACL_FILE, $env:SCREENPOP_ACL_FOLDER)) { (Microsoft.PowerShell.Security\\Get-Acl -LiteralPath $p).Sddl }',
].join('\n');

/** PowerShell's arguments: no profile, no prompts, the script as -EncodedCommand (no quoting). */
export const GET_ACL_ARGS = [
  '-NoLogo',
  '-NoProfile',
  '-NonInteractive',
  '-EncodedCommand',
  Buffer.from(GET_ACL_SCRIPT, 'utf16le').toString('base64'),
];

/**
 * The environment PowerShell gets: nothing of ours (a user's PSModulePath could put a Get-Acl of
 * their own first, COR_PROFILER could load their code into it), only the two paths and the
 * system folder Windows programs expect.
 */
function aclEnv(file: string, folder: string): Record<string, string> {
  const windows = win32.dirname(SYSTEM32);
  return {
    SCREENPOP_ACL_FILE: file,
    SCREENPOP_ACL_FOLDER: folder,
    SystemRoot: windows,
    windir: windows,
    PSModulePath: `${SYSTEM32}\\WindowsPowerShell\\v1.0\\Modules`,
  };
}

function toolFailure(err: unknown): string {
  const e = err as { code?: unknown; killed?: boolean; stderr?: string };
  if (e.code === 'ENOENT') return `${POWERSHELL_EXE} was not found`;
  if (e.killed) return 'powershell.exe did not answer within 15 s';
  const line = (e.stderr ?? '').split(/\r?\n/).find((l) => l.trim() !== '');
  const said = line ? `: ${line.trim().slice(0, 200)}` : '';
  return typeof e.code === 'number'
    ? `powershell.exe exited with ${e.code}${said}`
    : `powershell.exe could not be run (${typeof e.code === 'string' ? e.code : 'error'})`;
}

/** The Windows rule: the file's and its folder's ACL, read with PowerShell (see above). */
export function windowsPolicyTrust(run: RunTool = runTool): PolicyTrust {
  return async (path) => {
    const folder = win32.dirname(path);
    let output: string;
    try {
      output = await run(POWERSHELL_EXE, GET_ACL_ARGS, aclEnv(path, folder));
    } catch (err) {
      return `the permissions of ${path} and ${folder} could not be read (${toolFailure(err)})`;
    }
    const lines = output
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '');
    if (lines.length !== 2)
      return `the permissions of ${path} and ${folder} could not be read (powershell.exe gave ${lines.length} lines, not 2)`;
    return (
      sddlTrust(`the policy file ${path}`, lines[0]!) ??
      sddlTrust(`the folder ${folder}`, lines[1]!)
    );
  };
}
