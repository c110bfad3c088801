/**
 * The organisation's policy: a machine-wide JSON file an administrator writes (policyPath) that
 * presets and locks settings and adds actions on ring. It is untrusted input like any file: read
 * and validated here, never throwing; each bad part is named in the log (never its value) and left
 * out, the rest applies.
 *
 *   {
 *     "managedBy": "Acme IT (helpdesk 4000)",
 *     "settings": { "baseUrl": "https://acme.example.com", "updates": { "enabled": false } },
 *     "locked": ["baseUrl", "updates"],
 *     "onRing": [{ "openUrl": "https://intranet.example.com/who?n={from}" },
 *                { "run": "/usr/local/bin/log-call", "args": ["--from", "{from}"] }]
 *   }
 *
 * `settings` may hold any setting (the same names and rules as settings.json): it is the value a
 * user starts with (a preset). A name in `locked` keeps its policy value whatever the user's file
 * says (a locked name without a value in `settings` is locked at the built-in default). No field
 * needs code of its own: every key of Settings can be preset and locked.
 */
import { FileShapeError, readBoundedFile } from '../../../src-shared/files/bounded-file.ts';
import { parseJson } from '../../../src-shared/files/json-text.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { DEFAULT_SETTINGS, type Settings } from './types.ts';
import { readRegistryPolicy, REGISTRY_KEY, REGISTRY_VALUE } from './registry-policy.ts';
import { validateSettings } from './validate-settings.ts';
import { posixPolicyTrust, type Ownership, type PolicyTrust } from './policy-trust.ts';
import { windowsPolicyTrust } from './windows-acl.ts';
import { CALL_PLACEHOLDERS, unknownPlaceholder, writtenPlaceholders } from '../crm/placeholders.ts';

export type SettingName = Exclude<keyof Settings, 'version'>;

/** An administrator's action when a call starts ringing for the user. */
export type RingAction =
  { kind: 'openUrl'; url: string } | { kind: 'run'; program: string; args: string[] };

export interface Policy {
  /** The file it came from; null when there is none (nothing managed). */
  source: string | null;
  /** Who manages this computer, as shown beside locked settings. */
  managedBy: string;
  /** Valid preset values, by setting. */
  settings: Partial<Settings>;
  /** Settings that keep their policy value, and that value. */
  locked: Partial<Settings>;
  onRing: RingAction[];
}

export const NO_POLICY: Policy = {
  source: null,
  managedBy: '',
  settings: {},
  locked: {},
  onRing: [],
};

const DEFAULT_MANAGER = 'your administrator';
const MAX_ACTIONS = 10;
const MAX_ARGS = 50;
const MAX_ARG_LENGTH = 1000;
/** A policy is a few kilobytes; anything above this is not one (and would cost a log line per key). */
export const MAX_POLICY_BYTES = 1024 * 1024;
/** Problems named one by one in the log; the rest are counted in one line. */
const MAX_LOGGED_PROBLEMS = 20;

/**
 * Where the machine-wide policy lives on each OS: fixed paths, never from the environment (a user
 * may set %ProgramData% for the programs they start, and so choose a policy of their own). On
 * Windows it is C:\ProgramData (a Windows installed on another drive: see README).
 */
export function policyPath(platform: NodeJS.Platform): string {
  if (platform === 'win32') return 'C:\\ProgramData\\Screenpop\\policy.json';
  if (platform === 'darwin') return '/Library/Application Support/Screenpop/policy.json';
  return '/etc/screenpop/policy.json';
}

export interface PolicyProblem {
  /** What was wrong, by name ("settings.baseUrl", "locked[2]", "onRing[0].args[1]"). */
  field: string;
  message: string;
}

/**
 * Reads and validates the policy at `path`. Never throws: no file is no policy; an unreadable or
 * broken file is no policy and a logged problem; bad parts are logged and left out. With
 * `registry` (Windows), a policy in the registry comes first and the file is read only without one.
 */
export async function loadPolicy(
  path: string,
  logger: Logger,
  options: { registry?: () => Promise<string | null | Error>; trust?: PolicyTrust } = {},
): Promise<Policy> {
  const log = logger.child({ component: 'policy' });
  if (options.registry) {
    const found = await options.registry();
    if (typeof found === 'string')
      return policyFromText(found, `registry ${REGISTRY_KEY}\\${REGISTRY_VALUE}`, log);
    if (found instanceof Error)
      log.error('the registry policy could not be read; the policy file is used', {
        key: REGISTRY_KEY,
        error: found,
      });
  }
  let text: string;
  let owner: Ownership | undefined;
  try {
    text = (await readBoundedFile(path, MAX_POLICY_BYTES, (info) => (owner = info))).toString(
      'utf8',
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      log.info('no policy file', { path });
      return NO_POLICY;
    }
    if (err instanceof FileShapeError) {
      log.error(
        err.shape === 'not-a-file'
          ? 'the policy is not a regular file (a FIFO, a device or a folder); no policy applies'
          : `the policy file is larger than ${MAX_POLICY_BYTES} bytes; no policy applies`,
        { path },
      );
      return NO_POLICY;
    }
    log.error('policy file could not be read; no policy applies', { path, code: code ?? 'error' });
    return NO_POLICY;
  }
  const distrust = options.trust && owner ? await options.trust(path, owner) : null;
  if (distrust) {
    log.error(
      'the policy file could have been written by a user who is not an administrator; it is ignored',
      { path, why: distrust },
    );
    return NO_POLICY;
  }
  return policyFromText(text, path, log);
}

/**
 * This computer's policy: on Windows the registry, then the file; the file is honoured only when no
 * one but root (policy-trust.ts) or, on Windows, the system and the administrators (windows-acl.ts)
 * could have written it. `path` replaces the OS's file
 * (tests, --policy: a file its caller chose, for that run alone); then the registry is not read
 * and the file is not judged.
 */
export function loadMachinePolicy(
  logger: Logger,
  platform: NodeJS.Platform,
  path: string | null = null,
): Promise<Policy> {
  if (path) return loadPolicy(path, logger);
  return loadPolicy(policyPath(platform), logger, machinePolicyChecks(platform));
}

/** Where the OS's own policy comes from besides its file, and the rule its file must pass. */
export function machinePolicyChecks(platform: NodeJS.Platform): {
  registry?: () => Promise<string | null | Error>;
  trust: PolicyTrust;
} {
  return platform === 'win32'
    ? { registry: () => readRegistryPolicy(), trust: windowsPolicyTrust() }
    : { trust: posixPolicyTrust() };
}

function policyFromText(text: string, source: string, log: Logger): Policy {
  const json = parseJson(text.replace(/^\uFEFF/, ''));
  if (!json.ok) {
    log.error('the policy is not valid JSON; no policy applies', { source, where: json.where });
    return NO_POLICY;
  }
  const { policy, problems } = validatePolicy(json.value, source);
  for (const p of problems.slice(0, MAX_LOGGED_PROBLEMS))
    log.warn('policy problem; this part is ignored', { field: p.field, problem: p.message });
  if (problems.length > MAX_LOGGED_PROBLEMS)
    log.warn('more policy problems, not listed one by one; those parts are ignored too', {
      more: problems.length - MAX_LOGGED_PROBLEMS,
    });
  log.info('policy applied', {
    source,
    managedBy: policy.managedBy,
    presets: Object.keys(policy.settings),
    locked: Object.keys(policy.locked),
    onRing: policy.onRing.length,
  });
  return policy;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isSettingName(name: unknown): name is SettingName {
  return typeof name === 'string' && name !== 'version' && Object.hasOwn(DEFAULT_SETTINGS, name);
}

/** Validates a parsed policy. Never throws; returns what is good and a problem per bad part. */
export function validatePolicy(
  input: unknown,
  source: string | null = null,
): { policy: Policy; problems: PolicyProblem[] } {
  const problems: PolicyProblem[] = [];
  if (!isObject(input)) {
    problems.push({ field: '(file)', message: 'the policy is not a JSON object' });
    return { policy: { ...NO_POLICY, source }, problems };
  }
  for (const key of Object.keys(input))
    if (!['version', 'managedBy', 'settings', 'locked', 'onRing'].includes(key))
      problems.push({
        field: key.slice(0, 40),
        message: 'is not a policy field (managedBy, settings, locked, onRing)',
      });
  if (input.version !== undefined && input.version !== 1)
    problems.push({ field: 'version', message: 'must be 1; the rest is read as version 1' });

  let managedBy = DEFAULT_MANAGER;
  if (input.managedBy !== undefined) {
    if (
      typeof input.managedBy === 'string' &&
      // eslint-disable-next-line no-control-regex
      /^[^\u0000-\u001f\u007f]{1,80}$/.test(input.managedBy.trim())
    )
      managedBy = input.managedBy.trim();
    else
      problems.push({
        field: 'managedBy',
        message: 'must be a name of up to 80 characters, e.g. "Acme IT (helpdesk 4000)"',
      });
  }

  const settings = presetSettings(input.settings, problems);
  const locked: Partial<Settings> = {};
  if (input.locked !== undefined) {
    if (!Array.isArray(input.locked))
      problems.push({ field: 'locked', message: 'must be a list of setting names' });
    else
      input.locked.forEach((name, i) => {
        if (!isSettingName(name)) {
          problems.push({ field: `locked[${i}]`, message: 'is not a Screenpop setting' });
          return;
        }
        const given = isObject(input.settings) && Object.hasOwn(input.settings, name);
        if (given && !Object.hasOwn(settings, name)) {
          // Its value was refused: locking it at the default could lock the user out (a typo in
          // the service address), so it is left to the user.
          problems.push({
            field: `locked[${i}]`,
            message: `${name} is not locked because its value in settings was refused`,
          });
          return;
        }
        const value = given ? settings[name] : DEFAULT_SETTINGS[name];
        (locked as Record<string, unknown>)[name] = structuredClone(value);
      });
  }

  withoutApiKeyInOrganisationMode(settings, locked, problems);
  const onRing = ringActions(input.onRing, settings, locked, problems);
  return { policy: { source, managedBy, settings, locked, onRing }, problems };
}

/**
 * Organisation mode keeps no API key on the desktops (docs/threat-model.md): a policy that sets
 * the mode and also an API key would put the key on every computer; the key is left out.
 */
function withoutApiKeyInOrganisationMode(
  settings: Partial<Settings>,
  locked: Partial<Settings>,
  problems: PolicyProblem[],
): void {
  const mode = locked.connectionMode ?? settings.connectionMode;
  if (mode !== 'organisation') return;
  for (const [where, part] of [
    ['settings', settings],
    ['locked', locked],
  ] as const) {
    if (!part.apiKey) continue;
    delete part.apiKey;
    problems.push({
      field: `${where}.apiKey`,
      message:
        'is not used in organisation mode (connectionMode "organisation": the desktops hold no API key); it was left out',
    });
  }
}

/** The `settings` object checked with the settings file's own rules; each refused field left out. */
function presetSettings(value: unknown, problems: PolicyProblem[]): Partial<Settings> {
  if (value === undefined) return {};
  if (!isObject(value)) {
    problems.push({ field: 'settings', message: 'must be an object of settings' });
    return {};
  }
  const { settings: checked, problems: found } = validateSettings(value);
  const refused = new Set<string>();
  for (const p of found) {
    problems.push({ field: `settings.${p.field}`, message: p.message });
    // A bad list entry drops that entry; any other problem refuses the field.
    if (!/\[\d+\]$/.test(p.field)) refused.add(p.field);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    if (isSettingName(key) && !refused.has(key)) out[key] = checked[key as keyof Settings];
  return out as Partial<Settings>;
}

/** `onRing`: each action checked; placeholders as in the CRM link. */
function ringActions(
  value: unknown,
  settings: Partial<Settings>,
  locked: Partial<Settings>,
  problems: PolicyProblem[],
): RingAction[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push({ field: 'onRing', message: 'must be a list of actions' });
    return [];
  }
  const schemes =
    locked.crmAllowedSchemes ?? settings.crmAllowedSchemes ?? DEFAULT_SETTINGS.crmAllowedSchemes;
  const out: RingAction[] = [];
  value.forEach((raw, i) => {
    const field = `onRing[${i}]`;
    if (i >= MAX_ACTIONS) {
      if (i === MAX_ACTIONS)
        problems.push({ field, message: `at most ${MAX_ACTIONS} actions; the rest are ignored` });
      return;
    }
    if (isObject(raw) && typeof raw.openUrl === 'string' && Object.keys(raw).length === 1) {
      // The CRM link's own rules: placeholders only after the host, an allowed scheme.
      const { problems: found } = validateSettings({
        crmUrlTemplate: raw.openUrl,
        crmAllowedSchemes: schemes,
      });
      const problem = found[0];
      if (problem)
        problems.push({
          field: `${field}.openUrl`,
          message: problem.message.replace(/^crmUrlTemplate /, '').replace(/;[^;]*$/, ''),
        });
      else out.push({ kind: 'openUrl', url: raw.openUrl.trim() });
      return;
    }
    if (isObject(raw) && typeof raw.run === 'string') {
      const action = runAction(raw, field, problems);
      if (action) out.push(action);
      return;
    }
    problems.push({
      field,
      message: 'must be {"openUrl": "https://..."} or {"run": "/full/path", "args": [...]}',
    });
  });
  return out;
}

function runAction(
  raw: Record<string, unknown>,
  field: string,
  problems: PolicyProblem[],
): RingAction | null {
  const extra = Object.keys(raw).find((k) => k !== 'run' && k !== 'args');
  if (extra) {
    problems.push({ field: `${field}.${extra.slice(0, 40)}`, message: 'is not known (run, args)' });
    return null;
  }
  const program = (raw.run as string).trim();
  // A full path: a bare name would be looked up on PATH, which the user controls. No placeholders.
  const absolute = program.startsWith('/') || /^[A-Za-z]:\\/.test(program);
  // eslint-disable-next-line no-control-regex
  if (!absolute || program.length > 1024 || /[\u0000-\u001f{}]/.test(program)) {
    problems.push({
      field: `${field}.run`,
      message: 'must be the full path of a program (no placeholders)',
    });
    return null;
  }
  if (/\.(bat|cmd)$/i.test(program)) {
    problems.push({
      field: `${field}.run`,
      message:
        'is a batch file, which Windows runs through cmd.exe (a shell); point to a program instead',
    });
    return null;
  }
  const args = raw.args ?? [];
  if (!Array.isArray(args) || args.length > MAX_ARGS) {
    problems.push({ field: `${field}.args`, message: `must be a list of up to ${MAX_ARGS} texts` });
    return null;
  }
  for (let i = 0; i < args.length; i++) {
    const arg: unknown = args[i];
    // eslint-disable-next-line no-control-regex
    const bad = typeof arg !== 'string' || arg.length > MAX_ARG_LENGTH || /\u0000/.test(arg);
    const unknown = typeof arg === 'string' && unknownPlaceholder(arg, CALL_PLACEHOLDERS) !== null;
    if (bad || unknown) {
      problems.push({
        field: `${field}.args[${i}]`,
        message: unknown
          ? `has an unknown placeholder; use ${writtenPlaceholders(CALL_PLACEHOLDERS)}`
          : `must be text of up to ${MAX_ARG_LENGTH} characters`,
      });
      return null;
    }
  }
  return { kind: 'run', program, args: args as string[] };
}

/** The defaults a settings file starts from on this computer: built-in, then the policy's presets. */
export function presetDefaults(policy: Policy): Settings {
  return { ...structuredClone(DEFAULT_SETTINGS), ...structuredClone(policy.settings) };
}

/** The settings in force: the user's, with every locked setting at its policy value. */
export function withLocks(user: Settings, policy: Policy): Settings {
  if (Object.keys(policy.locked).length === 0) return user;
  // Checked together: a user's CRM link must still fit the schemes the policy locked.
  return validateSettings({ ...user, ...structuredClone(policy.locked) }).settings;
}

/** A patch without the locked settings in it (the lock wins; the form shows them read-only). */
export function withoutLocked<T extends Partial<Settings>>(patch: T, policy: Policy): T {
  const out = { ...patch };
  for (const key of Object.keys(policy.locked)) delete (out as Record<string, unknown>)[key];
  return out;
}

/**
 * Who manages this computer when its policy locks connections to a proxy of its own (proxyMode
 * "manual", locked): a proxy that cannot be used is then the policy's to fix, and connections fail
 * closed naming it (net/network.ts). A preset the user can change is the user's setting.
 */
export function proxyPolicyOf(policy: Policy): string | undefined {
  return policy.locked.proxyMode === 'manual' ? policy.managedBy : undefined;
}

/** What the Settings window is told: who manages the computer and which settings are locked. */
export function managedView(policy: Policy): { by: string; locked: SettingName[] } | null {
  if (policy.source === null) return null;
  return { by: policy.managedBy, locked: Object.keys(policy.locked) as SettingName[] };
}
