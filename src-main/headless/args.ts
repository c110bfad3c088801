/**
 * Command-line flags of screenpop-headless, validated at the boundary. A usage error is thrown as
 * UsageError (exit code 2); nothing here touches the network.
 */
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { joinNegativeNumbers, valueOptionsOf } from '../../src-shared/process/cli-args.ts';
import { applyPatch } from '../core/settings/validate-settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../core/settings/types.ts';
import { LOCALES, PSEUDO_LOCALE } from '../../src-shared/i18n/locales.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import type { MessageId } from '../../src-shared/i18n/catalogue.ts';
import { english, phrase, type PhraseValue, type Words } from '../../src-shared/i18n/phrase.ts';
import { phoneSystemsJoined } from '../../src-shared/phone-systems/names.ts';
import { wireFor } from '../../src-shared/wire/index.ts';

export interface HeadlessArgs {
  /** The phone system behind --base-url: its token calls, stream and events (--phone-system). */
  phoneSystem: Settings['phoneSystem'];
  baseUrl: string;
  extensions: string[];
  dids: string[];
  region: string;
  demo: boolean;
  staleRingSec: number;
  /** Seconds between heartbeats on the event stream (a dead connection is found in 2-2.5 of them). */
  heartbeatSec: number;
  /** The webhook relay's address ('' = none), its name for the tenant ('' = from the base URL). */
  relayUrl: string;
  relayTenant: string;
  eventSource: Settings['eventSource'];
  /** A PEM file of certificate authorities trusted besides the system's ('' = none). */
  caFile: string;
  /** A contacts file (CSV or vCard) naming outside callers, as a full path ('' = none). */
  contacts: string;
  /**
   * Whose names the runner reads from the phone system (--directory): its extension list only
   * ('extensions'), or also the PBX's company contacts ('pbx-contacts', Yeastar P-Series only,
   * and its default there, as in the tray app).
   */
  directory: DirectorySource;
  /** The CRM lookup after each pop (provider 'none': no lookup). */
  crmLookup: Settings['crmLookup'];
  /**
   * Which calls are logged into the CRM the lookup uses (--crm-log, issue 39): answered ones, also
   * missed ones, or none (the default).
   */
  crmLog: CrmLogMode;
  /** `--crm-log-folder PATH`: the durable call-log queue's folder (null: the default, README). */
  crmLogFolder: string | null;
  /**
   * `--crm-log-secret-file PATH` (a full path): the generic connector's call-log signing secret,
   * read by cli.ts before the run (else SCREENPOP_CRM_LOG_SECRET, else the keychain). Never a
   * command-line value, which any user of the machine could read in `ps`. The receiver itself is
   * `crmLookup.logUrl` (`--crm-log-url`).
   */
  crmLogSecretFile: string | null;
  /** Voicemail, SMS, trunk status, presence: all on unless turned off with --without. */
  features: Settings['features'];
  verbose: boolean;
  help: boolean;
  /** The policy file (default: this OS's machine-wide path, policy.ts policyPath). */
  policy: string | null;
  /** Write a diagnostics archive here and exit. */
  diagnostics: string | null;
  /** Read the API secret from stdin, store it in the keychain and exit. */
  storeSecret: boolean;
  /**
   * Organisation mode: the relay alone (`--relay-url` and `--relay-tenant`, no `--base-url`),
   * signed in as one of the relay's users; no API key or secret on this machine.
   */
  organisation: boolean;
  /**
   * A one-time enrolment code to exchange for this device's credential first. From the command
   * line (`--enrol CODE`, visible in /proc/<pid>/cmdline: warned), or null here and read by cli.ts
   * from standard input (`--enrol -`) or a file (`--enrol-file PATH`) before the run.
   */
  enrol: string | null;
  /** Where the enrolment code comes from (null: no enrolment this run). */
  enrolFrom: 'command-line' | 'stdin' | 'file' | null;
  /** `--enrol-file PATH` (a full path). */
  enrolFile: string | null;
  /** `--credential-file PATH`: the device credential kept in this 0600 file, not the keychain. */
  credentialFile: string | null;
  /**
   * `screenpop-headless dial <number>`: call the number from the user's extension with these
   * settings, print one JSON line and exit (runner.ts runDial); null for a normal run.
   */
  dial: string | null;
}

/** The runner's one command (a word before the flags): `dial <number>`. */
export const DIAL_COMMAND = 'dial';

/**
 * `dial <number>` at the head of the command line: the number (as given; the phone-number module
 * reads it later) and the flags after it; no command: null and the whole command line.
 */
function commandOf(argv: string[]): { dial: string | null; rest: string[] } {
  if (argv[0] !== DIAL_COMMAND) return { dial: null, rest: argv };
  const number = argv[1];
  if (number === undefined || number.startsWith('--') || number.trim() === '')
    throw usageError('dial-number');
  return { dial: number, rest: argv.slice(2) };
}

/** What --crm-log takes. */
export const CRM_LOG_MODES = ['answered', 'answered-and-missed', 'none'] as const;
export type CrmLogMode = (typeof CRM_LOG_MODES)[number];

/** What --directory takes. */
export const DIRECTORY_SOURCES = ['extensions', 'pbx-contacts'] as const;
export type DirectorySource = (typeof DIRECTORY_SOURCES)[number];

/**
 * A command line the runner cannot run: `words` are catalogue phrases (`runner.usage.*`), said by
 * cli.ts in the runner's language (--lang); the message is their English, for logs and tests.
 */
export class UsageError extends Error {
  readonly words: Words;
  constructor(words: Words) {
    super(english(words));
    this.name = 'UsageError';
    this.words = words;
  }
}

/** A usage error in the words of `runner.usage.<id>`. */
function usageError(id: UsageId, values?: Readonly<Record<string, PhraseValue>>): UsageError {
  return new UsageError([phrase(`runner.usage.${id}`, values)]);
}
type UsageId = MessageId extends infer M
  ? M extends `runner.usage.${infer Id}`
    ? Id
    : never
  : never;

/**
 * node:util parseArgs's error as our words: its codes are stable, its English sentences are not
 * ours (the option is the first quoted name in them). Anything else keeps Node's words as a detail.
 */
function parseError(error: unknown): UsageError {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  const flag = /'([^' ]+)/.exec(text)?.[1];
  if (flag && code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
    return usageError('unknown-option', { flag });
  if (flag && code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return usageError(/does not take/.test(text) ? 'takes-no-value' : 'needs-value', { flag });
  if (flag && code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return usageError('positional', { given: flag });
  return usageError('not-parsed', { detail: text });
}

/** The command lines of the help: syntax, the same in every language. */
const SYNOPSIS = [
  'screenpop-headless --base-url <https://tenant.example.com> --extension <n> [--extension <n> ...]',
  `                   [--phone-system ${phoneSystemsJoined('|')}]`,
  '                   [--did <number> ...] [--region <CC>] [--stale-ring-sec <s>]',
  '                   [--heartbeat-sec <s>] [--ca-file <pem>] [--contacts <file.csv|file.vcf>]',
  '                   [--directory extensions|pbx-contacts]',
  '                   [--crm hubspot | --crm generic --crm-url <https://…?phone={number}>',
  '                    [--crm-auth none|bearer|basic] [--crm-name-field <path>]',
  '                    [--crm-company-field <path>] [--crm-record-field <path>]]',
  '                   [--crm-timeout-sec <s>]',
  '                   [--crm-log answered|answered-and-missed|none] [--crm-log-folder <path>]',
  '                   [--crm-log-url <https://…> [--crm-log-secret-file <path>]]',
  '                   [--verbose] [--lang <code>]',
  '                   [--relay-url <https://relay.example.org> [--relay-tenant <name>]',
  '                    [--event-source auto|direct|relay]]',
  '                   [--without voicemail|sms|trunk|presence ...]',
  'screenpop-headless --relay-url <https://relay.example.org> --relay-tenant <name> [--enrol <code>]',
  '                   [--enrol - | --enrol-file <path>] [--credential-file <path>]',
  `screenpop-headless --demo [--extension 101] [--phone-system ${phoneSystemsJoined('|')}]`,
  'screenpop-headless dial <number> --base-url <url> --extension <n> [...]',
];

const POLICY_PATHS =
  '/etc/screenpop/policy.json, /Library/Application Support/Screenpop/policy.json, C:\\ProgramData\\Screenpop\\policy.json';

/** The languages --lang takes (the pseudo-locale too, for tests). */
export const LANG_CODES = [...LOCALES, PSEUDO_LOCALE];

/** The command-line help in the runner's language. */
export function usage(t: Translator): string {
  const [first, ...rest] = SYNOPSIS;
  return [
    `${t.t('runner.usage')} ${first}`,
    ...rest.map((line) => `       ${line}`),
    `       screenpop-headless --store-secret [--base-url <url>]      ${t.t('runner.usage-secret-stdin')}`,
    '       screenpop-headless --diagnostics <file.tar.gz> [...]',
    '       screenpop-headless --version',
    '',
    t.t('runner.help.policy', { paths: POLICY_PATHS }),
    '',
    t.t('runner.help.credentials'),
    t.t('runner.help.crm-log'),
    t.t('runner.help.organisation'),
    t.t('runner.help.proxy'),
    t.t('runner.help.language', { codes: LANG_CODES.join('|') }),
    t.t('runner.help.output'),
    t.t('runner.help.exit'),
    '',
    t.t('runner.help.dial'),
  ].join('\n');
}

/** The runner's flags, as node:util parseArgs takes them. */
const OPTIONS = {
  'base-url': { type: 'string' },
  'phone-system': { type: 'string' },
  extension: { type: 'string', multiple: true },
  did: { type: 'string', multiple: true },
  region: { type: 'string' },
  demo: { type: 'boolean' },
  'stale-ring-sec': { type: 'string' },
  'heartbeat-sec': { type: 'string' },
  'relay-url': { type: 'string' },
  'relay-tenant': { type: 'string' },
  'event-source': { type: 'string' },
  'ca-file': { type: 'string' },
  contacts: { type: 'string' },
  directory: { type: 'string' },
  crm: { type: 'string' },
  'crm-url': { type: 'string' },
  'crm-auth': { type: 'string' },
  'crm-name-field': { type: 'string' },
  'crm-company-field': { type: 'string' },
  'crm-record-field': { type: 'string' },
  'crm-timeout-sec': { type: 'string' },
  'crm-log': { type: 'string' },
  'crm-log-folder': { type: 'string' },
  'crm-log-url': { type: 'string' },
  'crm-log-secret-file': { type: 'string' },
  without: { type: 'string', multiple: true },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  policy: { type: 'string' },
  diagnostics: { type: 'string' },
  'store-secret': { type: 'boolean' },
  enrol: { type: 'string' },
  'enrol-file': { type: 'string' },
  'credential-file': { type: 'string' },
  lang: { type: 'string' },
} as const;

/**
 * `defaults`: what a flag not given means (the built-in defaults, or those with the policy's
 * presets: policy.ts presetDefaults). The policy's locks are applied by the runner afterwards.
 */
export function parseHeadlessArgs(
  argv: string[],
  defaults: Settings = DEFAULT_SETTINGS,
): HeadlessArgs {
  const { dial, rest } = commandOf(argv);
  let values;
  try {
    ({ values } = parseArgs({
      // A negative number is a value to check, not a flag (parseArgs: "argument is ambiguous").
      args: joinNegativeNumbers(rest, valueOptionsOf(OPTIONS)),
      strict: true,
      allowPositionals: false,
      options: OPTIONS,
    }));
  } catch (error) {
    throw parseError(error);
  }
  const demo = values.demo ?? false;
  // The flags that are settings go through the settings' own rules (validate-settings.ts): the
  // runner accepts exactly what the Settings window accepts.
  const user = settingsFlags(defaults, {
    phoneSystem: (values['phone-system'] ?? defaults.phoneSystem).trim() as Settings['phoneSystem'],
    extensions: (values.extension ?? defaults.extensions).map((e) => e.trim()),
    dids: (values.did ?? defaults.dids).map((d) => d.trim()).filter((d) => d.length > 0),
    defaultRegion: values.region ?? defaults.defaultRegion,
    staleRingSec:
      values['stale-ring-sec'] === undefined
        ? defaults.staleRingSec
        : Number(values['stale-ring-sec']),
  });
  const { extensions, dids, defaultRegion: region, staleRingSec, phoneSystem } = user;
  const heartbeatSec = values['heartbeat-sec'] === undefined ? 25 : Number(values['heartbeat-sec']);
  if (!Number.isFinite(heartbeatSec) || heartbeatSec < 2 || heartbeatSec > 30)
    throw usageError('number-range', { flag: '--heartbeat-sec', min: 2, max: 30 });
  // A preset event source counts only when the policy changed it from the built-in 'auto'.
  const relay = relayOptions(
    values['relay-url'] ?? (defaults.relayUrl || undefined),
    values['relay-tenant'] ?? (defaults.relayTenant || undefined),
    values['event-source'] ??
      (defaults.eventSource !== DEFAULT_SETTINGS.eventSource ? defaults.eventSource : undefined),
  );
  // Every feature the policy (defaults) leaves on is on, unless --without turns it off.
  const features = { ...defaults.features };
  for (const name of values.without ?? []) {
    const key = name.trim() as keyof Settings['features'];
    if (!Object.hasOwn(features, key))
      throw usageError('one-of', {
        flag: '--without',
        options: Object.keys(features).join(', '),
        given: JSON.stringify(name),
      });
    features[key] = false;
  }
  const help = values.help ?? false;
  const caFile = (values['ca-file'] ?? '').trim();
  if (caFile && !isAbsolute(caFile)) throw usageError('full-path', { flag: '--ca-file' });
  // A relative path is the shell's: made full here, so the log and any message name the file read.
  const contactsGiven = (values.contacts ?? defaults.contactsFile).trim();
  const contacts = contactsGiven ? resolve(contactsGiven) : '';
  const directory = directoryOption(values.directory, phoneSystem);
  const crmLookup = crmOptions(values, defaults.crmLookup);
  const crmLog = (values['crm-log']?.trim() || 'none') as CrmLogMode;
  if (!CRM_LOG_MODES.includes(crmLog))
    throw usageError('one-of', {
      flag: '--crm-log',
      options: CRM_LOG_MODES.join(', '),
      given: JSON.stringify(values['crm-log']),
    });
  const crmLogFolder = values['crm-log-folder']?.trim() || null;
  if (values['crm-log-folder'] !== undefined && (!crmLogFolder || !isAbsolute(crmLogFolder)))
    throw usageError('full-path', { flag: '--crm-log-folder' });
  const crmLogSecretFile = values['crm-log-secret-file']?.trim() || null;
  if (
    values['crm-log-secret-file'] !== undefined &&
    (!crmLogSecretFile || !isAbsolute(crmLogSecretFile))
  )
    throw usageError('full-path', { flag: '--crm-log-secret-file' });
  const diagnostics = values.diagnostics?.trim() || null;
  if (values.diagnostics !== undefined && !diagnostics) throw usageError('diagnostics-path');
  const storeSecret = values['store-secret'] ?? false;
  let baseUrl = values['base-url'] ?? defaults.baseUrl;
  const given = values.enrol?.trim() || null;
  if (values.enrol !== undefined && !given) throw usageError('enrol-code');
  const enrolFile = values['enrol-file']?.trim() || null;
  if (values['enrol-file'] !== undefined && !enrolFile) throw usageError('enrol-code');
  if (given && enrolFile) throw usageError('enrol-twice');
  if (enrolFile && !isAbsolute(enrolFile)) throw usageError('full-path', { flag: '--enrol-file' });
  const enrolFrom = enrolFile ? 'file' : given === '-' ? 'stdin' : given ? 'command-line' : null;
  const enrol = enrolFrom === 'command-line' ? given : null;
  const credentialFile = values['credential-file']?.trim() || null;
  if (values['credential-file'] !== undefined && !credentialFile)
    throw usageError('full-path', { flag: '--credential-file' });
  if (credentialFile && !isAbsolute(credentialFile))
    throw usageError('full-path', { flag: '--credential-file' });
  // The relay alone, without the phone system's address: organisation mode (no key, no secret).
  const organisation = !demo && !help && !baseUrl && relay.relayUrl !== '' && !diagnostics;
  if (enrolFrom && !organisation) throw usageError('enrol-needs-relay');
  if (dial !== null && (storeSecret || diagnostics || enrolFrom)) throw usageError('dial-alone');
  if (credentialFile && !organisation) throw usageError('credential-file-needs-relay');
  if (organisation) {
    if (!relay.relayTenant) throw usageError('organisation-tenant');
    if (relay.eventSource === 'direct') throw usageError('organisation-direct');
  }
  // A diagnostics archive is written whatever is missing (that is what it is for).
  if (!demo && !help && !organisation && !(diagnostics && !baseUrl)) {
    if (!baseUrl.trim()) throw usageError('base-url');
    baseUrl = settingsFlags(defaults, { baseUrl }).baseUrl;
    if (extensions.length === 0 && dids.length === 0 && !storeSecret && !diagnostics)
      throw usageError('extension');
  }
  return {
    phoneSystem,
    baseUrl,
    extensions: demo && extensions.length === 0 ? ['101'] : extensions,
    dids,
    region,
    demo,
    staleRingSec,
    heartbeatSec,
    ...relay,
    caFile,
    contacts,
    directory,
    crmLookup,
    crmLog,
    crmLogFolder,
    crmLogSecretFile,
    features,
    verbose: values.verbose ?? false,
    help,
    policy: values.policy?.trim() || null,
    diagnostics,
    storeSecret,
    organisation,
    enrol,
    enrolFrom,
    enrolFile,
    credentialFile,
    dial,
  };
}

/**
 * --directory: the PBX's company contacts exist on a Yeastar P-Series PBX only, where they are
 * read by default (as in the tray app); `extensions` turns them off.
 */
function directoryOption(
  given: string | undefined,
  phoneSystem: Settings['phoneSystem'],
): DirectorySource {
  const pbxLists = wireFor(phoneSystem).api.pbxLists === true;
  if (given === undefined) return pbxLists ? 'pbx-contacts' : 'extensions';
  const value = given.trim();
  if (!(DIRECTORY_SOURCES as readonly string[]).includes(value))
    throw usageError('one-of', {
      flag: '--directory',
      options: DIRECTORY_SOURCES.join(', '),
      given: JSON.stringify(given),
    });
  if (value === 'pbx-contacts' && !pbxLists) throw usageError('directory-needs-yeastar');
  return value as DirectorySource;
}

/** The flags that matter before the rest is parsed (where the policy is, how much to log). */
export function preScan(argv: readonly string[]): {
  policy: string | null;
  verbose: boolean;
  lang: string | null;
  help: boolean;
  version: boolean;
} {
  let policy: string | null = null;
  let lang: string | null = null;
  argv.forEach((a, i) => {
    if (a === '--policy') policy = argv[i + 1] ?? null;
    else if (a.startsWith('--policy=')) policy = a.slice('--policy='.length);
    else if (a === '--lang') lang = argv[i + 1] ?? null;
    else if (a.startsWith('--lang=')) lang = a.slice('--lang='.length);
  });
  return {
    policy: policy || null,
    verbose: argv.includes('--verbose'),
    lang: lang || null,
    help: argv.includes('--help') || argv.includes('-h'),
    version: argv.includes('--version'),
  };
}

/** The flag that sets each setting (or part of `crmLookup`), for the words of a usage error. */
const FLAG_OF: Partial<
  Record<keyof Settings | `crmLookup.${keyof Settings['crmLookup']}`, string>
> = {
  phoneSystem: '--phone-system',
  baseUrl: '--base-url',
  extensions: '--extension',
  dids: '--did',
  defaultRegion: '--region',
  staleRingSec: '--stale-ring-sec',
  relayUrl: '--relay-url',
  relayTenant: '--relay-tenant',
  eventSource: '--event-source',
  crmLookup: '--crm',
  'crmLookup.provider': '--crm',
  'crmLookup.urlTemplate': '--crm-url',
  'crmLookup.auth': '--crm-auth',
  'crmLookup.nameField': '--crm-name-field',
  'crmLookup.companyField': '--crm-company-field',
  'crmLookup.recordUrlField': '--crm-record-field',
  'crmLookup.timeoutSec': '--crm-timeout-sec',
  'crmLookup.logUrl': '--crm-log-url',
};

/**
 * Flags that are settings, checked by the settings' own rules (validate-settings.ts applyPatch, the
 * same words as the Settings window); the first problem is the usage error, named by its flag.
 */
function settingsFlags(defaults: Settings, patch: Partial<Settings>): Settings {
  const checked = applyPatch(defaults, patch);
  if (checked.ok) return checked.settings;
  // A part of the CRM lookup is named by its own flag (--crm-log-url), with the part's problem.
  const [outer] = checked.words;
  const inner = outer?.id === 'status.settings.inner' ? outer.values : undefined;
  const part = checked.field === 'crmLookup' && typeof inner?.name === 'string' ? inner.name : null;
  const setting = (
    part ? `crmLookup.${part}` : checked.field.replace(/\[\d+\]$/, '')
  ) as keyof typeof FLAG_OF;
  const flag = FLAG_OF[setting];
  const problem = flag && part && typeof inner?.problem === 'object' ? inner.problem : null;
  throw usageError('flag-problem', {
    flag: flag ?? (part ? FLAG_OF.crmLookup : undefined) ?? setting,
    problem: problem ?? checked.words,
  });
}

/** The --crm flags over the policy's (or built-in) lookup, checked by the settings' own rules. */
function crmOptions(
  values: Record<string, string | boolean | string[] | undefined>,
  defaults: Settings['crmLookup'],
): Settings['crmLookup'] {
  const text = (name: string) => {
    const v = values[name];
    return typeof v === 'string' ? v.trim() : undefined;
  };
  const timeout = text('crm-timeout-sec');
  const wanted = {
    ...defaults,
    ...(text('crm') !== undefined ? { provider: text('crm') } : {}),
    ...(text('crm-url') !== undefined ? { urlTemplate: text('crm-url') } : {}),
    ...(text('crm-auth') !== undefined ? { auth: text('crm-auth') } : {}),
    ...(text('crm-name-field') !== undefined ? { nameField: text('crm-name-field') } : {}),
    ...(text('crm-company-field') !== undefined ? { companyField: text('crm-company-field') } : {}),
    ...(text('crm-record-field') !== undefined ? { recordUrlField: text('crm-record-field') } : {}),
    ...(timeout !== undefined ? { timeoutSec: Number(timeout) } : {}),
    ...(text('crm-log-url') !== undefined ? { logUrl: text('crm-log-url') } : {}),
  } as Settings['crmLookup'];
  return settingsFlags(DEFAULT_SETTINGS, { crmLookup: wanted }).crmLookup;
}

/**
 * --relay-url, --relay-tenant and --event-source, checked by the app's own settings rules (the
 * same words as its Settings window). With a relay the default is 'auto' (the direct stream and the
 * relay as hot standby), without one 'direct'.
 */
function relayOptions(
  url: string | undefined,
  tenant: string | undefined,
  source: string | undefined,
): Pick<HeadlessArgs, 'relayUrl' | 'relayTenant' | 'eventSource'> {
  const relayUrl = url?.trim() ?? '';
  const eventSource = (source ?? (relayUrl ? 'auto' : 'direct')) as Settings['eventSource'];
  const checked = settingsFlags(DEFAULT_SETTINGS, {
    relayUrl,
    relayTenant: tenant ?? '',
    eventSource,
  });
  if (eventSource !== 'direct' && !checked.relayUrl)
    throw usageError('source-needs-relay', { source: eventSource });
  return {
    relayUrl: checked.relayUrl,
    relayTenant: checked.relayTenant,
    eventSource: checked.eventSource,
  };
}
