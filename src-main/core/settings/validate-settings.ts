/**
 * The settings schema, hand-written against Settings / DEFAULT_SETTINGS (types.ts). A settings file
 * is untrusted input (hand-edited, half-written, from another version): validation never throws on
 * it. Each bad field is reported by name with what to do about it and replaced by its default;
 * unknown fields are dropped with a warning; a field that looks like a secret is removed and
 * reported (secrets live only in the keychain). No message ever quotes the value it is about: the
 * messages are logged and shown, and a value typed or pasted into the wrong field may be a secret.
 *
 * A problem is a catalogue phrase (`status.settings.*`): the window and the runner say it in the
 * user's language beside the field (or with its label, or its flag); `message` is its English with
 * the setting's name, for logs and errors.
 */
import { isAbsolute } from 'node:path';
import { DENIED_SCHEMES, allowedSchemeSet, normalizeScheme } from '../url-schemes.ts';
import type { CrmLookupSettings, FeatureSettings, Settings, UpdateSettings } from './types.ts';
import { fieldMappingOk, lookupTemplateProblem, type TemplateProblem } from '../crm/template.ts';
import {
  CONNECTION_MODES,
  CRM_TIMEOUT_SEC,
  DEFAULT_SETTINGS,
  LANGUAGE_SETTINGS,
  PHONE_SYSTEMS,
} from './types.ts';
import { HTTP_SCHEMES, isSecureOrLoopback, WS_SCHEMES } from '../../../src-shared/loopback.ts';
import {
  isDid,
  isExtensionNumber,
  MAX_EXTENSION_DIGITS,
  regionCode,
} from '../../../src-shared/phone-number-rules.ts';
import { isSecretName, redactTree, REDACTED } from '../../../src-shared/log.ts';
import { TENANT_PATTERN } from '../../../src-shared/relay-protocol.ts';
import { PROXY_AUTH_MODES } from '../../../src-shared/net/proxy-auth.ts';
import { english, phrase, type Phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';
import {
  fillPlaceholders,
  LOOKUP_PLACEHOLDERS,
  MAX_TEMPLATE,
  unknownCallPlaceholder,
} from '../crm/placeholders.ts';

export interface SettingsProblem {
  /** The setting's name (e.g. "baseUrl", "extensions[2]"), or "(file)" for the file as a whole. */
  field: string;
  /**
   * What is wrong and what to write, without the setting's name: said by the edge. Absent for a
   * problem of the file itself (unreadable, not JSON), which is only logged.
   */
  words?: Words;
  /** In English with the setting's name (and, for a file, what was done): logs, errors. */
  message: string;
}

/** A problem with a patch: the first one, for the edge to say next to its field. */
export interface PatchProblem {
  ok: false;
  field: string;
  words: Words;
  message: string;
}

/** Thrown by SettingsStore.save/update for a value the user must correct. */
export class SettingsValidationError extends Error {
  readonly field: string;
  readonly words: Words;
  readonly problems: SettingsProblem[];

  constructor(problems: SettingsProblem[]) {
    const first = problems[0] ?? {
      field: '(settings)',
      words: [phrase('status.settings.invalid')],
      message: 'invalid settings',
    };
    super(first.message);
    this.name = 'SettingsValidationError';
    this.field = first.field;
    this.words = first.words ?? [phrase('status.settings.invalid')];
    this.problems = problems;
  }
}

export const FILE_FIELD = '(file)';

/** A setting's problem: a phrase of the catalogue's `status.settings.*`. */
type Problem = { error: Phrase };
type Check<T> = (value: unknown, draft: Settings) => { value: T } | Problem;
/** For lists: bad entries are dropped one by one and reported as `field[i]`. */
type ListCheck = (value: unknown) => { value: string } | Problem;

/** The problem `id` (a `status.settings.*` message) with its values. */
function problem(id: MessageId, values?: Record<string, string | number | Words>): Problem {
  return { error: phrase(id, values) };
}

/** A problem of a field inside an object setting ("enabled must be true or false"). */
function inner(name: string, error: Phrase): Problem {
  return problem('status.settings.inner', { name, problem: [error] });
}

/** `"a", "b", "c"`: the choices of a setting, as the messages quote them. */
function quoted(options: readonly string[]): string {
  return options.map((o) => `"${o}"`).join(', ');
}

function bool(): Check<boolean> {
  return (v) => (typeof v === 'boolean' ? { value: v } : problem('status.settings.boolean'));
}

function oneOf<T extends string>(options: readonly T[]): Check<T> {
  return (v) =>
    typeof v === 'string' && (options as readonly string[]).includes(v)
      ? { value: v as T }
      : problem('status.settings.one-of', { options: quoted(options) });
}

function integer(min: number, max: number, unit: 'seconds' | 'calls' | '' = ''): Check<number> {
  const id = unit
    ? (`status.settings.whole-${unit}` as const)
    : ('status.settings.whole-number' as const);
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? { value: v }
      : problem(id, { min: String(min), max: String(max) });
}

/**
 * A typed address read as a URL: `empty` when none is given, else the URL or the problem (not
 * text, not an address), in the words of `kind`'s messages with `example`.
 */
function readAddress(
  v: unknown,
  kind: 'address' | 'proxy',
  example: string,
): { empty: true } | { url: URL; text: string } | Problem {
  if (typeof v !== 'string') return problem(`status.settings.${kind}-text`, { example });
  const text = v.trim();
  if (text === '') return { empty: true };
  try {
    return { url: new URL(text), text };
  } catch {
    return problem(`status.settings.${kind}-invalid`, { example });
  }
}

/**
 * An address of the service (`https`) or of the relay: `secure` is the scheme required except on
 * this computer. The relay is reached at its https address as the administrator gives it (its
 * stream is the same address with wss, which is accepted too: relay-source.ts's relayStreamUrl is
 * the one place that maps one to the other).
 */
function serviceUrl(v: unknown, secure: 'https' | 'relay'): { value: string } | Problem {
  const example = secure === 'https' ? 'https://acme.example.com' : 'https://relay.example.org';
  const read = readAddress(v, 'address', example);
  if (!('url' in read)) return 'error' in read ? read : { value: '' };
  const { url, text } = read;
  if (secure === 'relay') {
    if (!isSecureOrLoopback(url, [HTTP_SCHEMES, WS_SCHEMES]))
      return problem('status.settings.relay-address-insecure');
  } else if (!isSecureOrLoopback(url))
    return problem('status.settings.address-insecure', { secure: 'https', insecure: 'http' });
  if (url.username || url.password) return problem('status.settings.address-credentials');
  if (url.search || url.hash || text.includes('?') || text.includes('#'))
    return problem('status.settings.address-query', { example });
  return { value: url.origin + url.pathname.replace(/\/+$/, '') };
}

/** A full path of a file, or empty. */
function absolutePath(kind: 'contacts' | 'ca'): Check<string> {
  const bad = problem(`status.settings.path-${kind}`);
  return (v) => {
    if (typeof v !== 'string') return bad;
    const p = v.trim();
    if (p === '') return { value: '' };
    return p.length <= 4096 && !p.includes('\0') && isAbsolute(p) ? { value: p } : bad;
  };
}

/**
 * The explicit proxy, http://host:port. Never a user name or password: settings files hold no
 * secrets (the proxy's password is kept in the system keychain).
 */
function proxyAddress(v: unknown): { value: string } | Problem {
  const example = 'http://proxy.example.com:3128';
  const read = readAddress(v, 'proxy', example);
  if (!('url' in read)) return 'error' in read ? read : { value: '' };
  const { url } = read;
  if (url.protocol !== 'http:') return problem('status.settings.proxy-http', { example });
  if (url.username || url.password) return problem('status.settings.proxy-credentials');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    return problem('status.settings.proxy-only-address', { example });
  return { value: `http://${url.host}` };
}

type Done = (what: string) => string;

/** Problems reported per list at most; the rest are counted in one more line. */
const MAX_LIST_PROBLEMS = 10;

function stringList(
  maxItems: number,
  item: ListCheck,
): (
  value: unknown,
  field: string,
  done: Done,
) => { value: string[]; problems: SettingsProblem[] } | Problem {
  return (value, field, done) => {
    if (!Array.isArray(value)) return problem('status.settings.list');
    // A Set keeps the first of each value: a pasted list of 200,000 entries is checked in linear
    // time (the main process must not block on it), and only its first entries are looked at.
    const out = new Set<string>();
    const problems: SettingsProblem[] = [];
    let bad = 0;
    let extra = 0;
    for (let i = 0; i < value.length; i++) {
      if (out.size >= maxItems) {
        extra = value.length - i;
        break;
      }
      const r = item(value[i]);
      if (!('error' in r)) {
        out.add(r.value);
        continue;
      }
      bad += 1;
      if (bad <= MAX_LIST_PROBLEMS)
        problems.push(said(`${field}[${i}]`, r.error, done('it was left out')));
    }
    if (bad > MAX_LIST_PROBLEMS)
      problems.push(
        said(
          field,
          phrase('status.settings.more-entries', { count: String(bad - MAX_LIST_PROBLEMS) }),
          done('they were left out'),
        ),
      );
    if (extra > 0)
      problems.push(
        said(
          field,
          phrase('status.settings.too-many', { max: String(maxItems) }),
          done(`the ${extra} after the first ${maxItems} were left out`),
        ),
      );
    return { value: [...out], problems };
  };
}

const extensionNumber: ListCheck = (v) => {
  const s =
    typeof v === 'number' && Number.isInteger(v) && v >= 0
      ? String(v)
      : typeof v === 'string'
        ? v.trim()
        : undefined;
  return s !== undefined && isExtensionNumber(s)
    ? { value: s }
    : problem('status.settings.extension', { max: String(MAX_EXTENSION_DIGITS) });
};

const phoneNumber: ListCheck = (v) => {
  const s = typeof v === 'string' ? v.trim() : undefined;
  return s !== undefined && isDid(s) ? { value: s } : problem('status.settings.phone-number');
};

const urlScheme: ListCheck = (v) => {
  const s = typeof v === 'string' ? normalizeScheme(v) : null;
  if (s === null) return problem('status.settings.scheme');
  // The same list the link gate applies (url-schemes.ts): a scheme accepted here always opens.
  if (DENIED_SCHEMES.has(s))
    return s === 'http'
      ? problem('status.settings.scheme-http')
      : problem('status.settings.scheme-denied', { scheme: s });
  return { value: s };
};

const LISTS = {
  extensions: stringList(100, extensionNumber),
  dids: stringList(100, phoneNumber),
  crmAllowedSchemes: stringList(20, urlScheme),
} as const;

/**
 * The CRM link: placeholders only after the address's host (caller ID is chosen by the caller and
 * must never pick where the link goes), a scheme from crmAllowedSchemes.
 */
function crmTemplate(v: unknown, draft: Settings): { value: string } | Problem {
  const example = 'https://crm.example.com/search?q={from}';
  if (typeof v !== 'string') return problem('status.settings.crm-text', { example });
  const text = v.trim();
  if (text === '') return { value: '' };
  if (text.length > MAX_TEMPLATE)
    return problem('status.settings.too-long', { max: String(MAX_TEMPLATE) });
  const unknown = unknownCallPlaceholder(text);
  if (unknown) return problem('status.settings.crm-placeholder', unknown);
  let url: URL;
  try {
    url = new URL(fillPlaceholders(text, () => 'placeholder0'));
  } catch {
    return problem('status.settings.crm-invalid', { example });
  }
  const scheme = url.protocol.slice(0, -1);
  if (!allowedSchemeSet(draft.crmAllowedSchemes).has(scheme)) {
    if (DENIED_SCHEMES.has(scheme)) return problem('status.settings.crm-scheme-denied', { scheme });
    return draft.crmAllowedSchemes.length > 0
      ? problem('status.settings.crm-scheme-not-allowed', {
          scheme,
          allowed: draft.crmAllowedSchemes.join(', '),
        })
      : problem('status.settings.crm-scheme-none-allowed', { scheme });
  }
  if (url.username || url.password) return problem('status.settings.crm-credentials');
  const head = text.slice(0, text.indexOf(':') + 1 + (url.host ? 2 + url.host.length : 0));
  if (head.includes('{')) return problem('status.settings.crm-placeholder-host');
  return { value: text };
}

/**
 * The `updates` object: each field checked, a missing one takes its default, an unknown one is an
 * error (a misspelt `enabled` must not leave updates on unnoticed).
 */
function updatesCheck(v: unknown): { value: UpdateSettings } | Problem {
  const known = Object.keys(DEFAULT_SETTINGS.updates).join(', ');
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return problem('status.settings.object', {
      example: '{"enabled": true, "channel": "latest", "feedUrl": ""}',
      known,
    });
  const raw = v as Record<string, unknown>;
  const unknownKey = Object.keys(raw).find((k) => !Object.hasOwn(DEFAULT_SETTINGS.updates, k));
  if (unknownKey)
    return problem('status.settings.unknown-key', { name: unknownKey.slice(0, 40), known });
  const value = { ...DEFAULT_SETTINGS.updates };
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled !== 'boolean')
      return inner('enabled', phrase('status.settings.boolean'));
    value.enabled = raw.enabled;
  }
  if (raw.channel !== undefined) {
    if (typeof raw.channel !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(raw.channel.trim()))
      return inner('channel', phrase('status.settings.channel'));
    value.channel = raw.channel.trim();
  }
  if (raw.feedUrl !== undefined) {
    const feed = serviceUrl(raw.feedUrl, 'https');
    if ('error' in feed) return inner('feedUrl', feed.error);
    value.feedUrl = feed.value;
  }
  return { value };
}

/** The `features` object: each a boolean, a missing one on, an unknown one an error. */
function featuresCheck(v: unknown): { value: FeatureSettings } | Problem {
  const known = Object.keys(DEFAULT_SETTINGS.features).join(', ');
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return problem('status.settings.object', {
      example: '{"voicemail": true, "sms": false}',
      known,
    });
  const raw = v as Record<string, unknown>;
  const value = { ...DEFAULT_SETTINGS.features };
  for (const [key, on] of Object.entries(raw)) {
    if (!Object.hasOwn(value, key))
      return problem('status.settings.unknown-key', { name: key.slice(0, 40), known });
    if (typeof on !== 'boolean') return inner(key, phrase('status.settings.boolean'));
    value[key as keyof FeatureSettings] = on;
  }
  return { value };
}

/** The lookup template's problems (crm/template.ts), as phrases; its placeholders are values. */
const LOOKUP_WORDS = Object.fromEntries(LOOKUP_PLACEHOLDERS.map((p) => [p, `{${p}}`]));
const LOOKUP_TEMPLATE_WORDS: Record<TemplateProblem, Phrase> = {
  empty: phrase('status.settings.lookup-empty', {
    example: 'https://crm.example.com/api/lookup?phone={number}',
  }),
  'too-long': phrase('status.settings.too-long', { max: String(MAX_TEMPLATE) }),
  'not-a-url': phrase('status.settings.lookup-invalid'),
  'not-https': phrase('status.settings.lookup-https'),
  credentials: phrase('status.settings.lookup-credentials'),
  'unknown-placeholder': phrase('status.settings.lookup-placeholder', LOOKUP_WORDS),
  'placeholder-outside-query': phrase('status.settings.lookup-placeholder-query', {
    ...LOOKUP_WORDS,
    example: '…?phone={number}',
  }),
  'no-placeholder': phrase('status.settings.lookup-no-placeholder', LOOKUP_WORDS),
};

/** The `crmLookup` object: each field checked, a missing one takes its default, an unknown one is an error. */
function crmLookupCheck(v: unknown): { value: CrmLookupSettings } | Problem {
  const known = Object.keys(DEFAULT_SETTINGS.crmLookup).join(', ');
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return problem('status.settings.object', { example: '{"provider": "hubspot"}', known });
  const raw = v as Record<string, unknown>;
  const unknownKey = Object.keys(raw).find((k) => !Object.hasOwn(DEFAULT_SETTINGS.crmLookup, k));
  if (unknownKey)
    return problem('status.settings.unknown-key', { name: unknownKey.slice(0, 40), known });
  const value = { ...DEFAULT_SETTINGS.crmLookup, ...raw } as Record<string, unknown>;
  const provider = oneOf(['none', 'generic', 'hubspot'] as const)(value.provider, DEFAULT_SETTINGS);
  if ('error' in provider) return inner('provider', provider.error);
  const auth = oneOf(['none', 'bearer', 'basic'] as const)(value.auth, DEFAULT_SETTINGS);
  if ('error' in auth) return inner('auth', auth.error);
  const timeout = integer(
    CRM_TIMEOUT_SEC.min,
    CRM_TIMEOUT_SEC.max,
    'seconds',
  )(value.timeoutSec, DEFAULT_SETTINGS);
  if ('error' in timeout) return inner('timeoutSec', timeout.error);
  if (typeof value.urlTemplate !== 'string')
    return inner('urlTemplate', phrase('status.settings.text'));
  const urlTemplate = value.urlTemplate.trim();
  if (provider.value === 'generic' || urlTemplate !== '') {
    const found = lookupTemplateProblem(urlTemplate);
    if (found) return inner('urlTemplate', LOOKUP_TEMPLATE_WORDS[found]);
  }
  const fields = ['nameField', 'companyField', 'recordUrlField'] as const;
  for (const f of fields) {
    const mapping = value[f];
    if (typeof mapping !== 'string' || !fieldMappingOk(mapping))
      return inner(f, phrase('status.settings.lookup-field-path'));
  }
  if (provider.value === 'generic' && String(value.nameField).trim() === '')
    return inner('nameField', phrase('status.settings.lookup-name-needed'));
  return {
    value: {
      provider: provider.value,
      urlTemplate,
      auth: auth.value,
      nameField: String(value.nameField).trim(),
      companyField: String(value.companyField).trim(),
      recordUrlField: String(value.recordUrlField).trim(),
      timeoutSec: timeout.value,
    },
  };
}

const CHECKS: { [K in Exclude<keyof Settings, keyof typeof LISTS>]: Check<Settings[K]> } = {
  version: (v) => (v === 1 ? { value: 1 } : problem('status.settings.version')),
  phoneSystem: oneOf(PHONE_SYSTEMS),
  baseUrl: (v) => serviceUrl(v, 'https'),
  apiKey: (v) =>
    typeof v === 'string' && /^[\x21-\x7e]{0,256}$/.test(v.trim())
      ? { value: v.trim() }
      : problem('status.settings.api-key'),
  defaultRegion: (v) => {
    const region = typeof v === 'string' ? regionCode(v) : null;
    return region !== null ? { value: region } : problem('status.settings.region');
  },
  eventSource: oneOf(['auto', 'direct', 'relay'] as const),
  relayUrl: (v) => serviceUrl(v, 'relay'),
  // The relay's own rule for tenant names (a name it would refuse is refused here, by the field).
  relayTenant: (v) =>
    typeof v === 'string' && (v.trim() === '' || TENANT_PATTERN.test(v.trim()))
      ? { value: v.trim() }
      : problem('status.settings.relay-tenant'),
  connectionMode: oneOf(CONNECTION_MODES),
  crmUrlTemplate: crmTemplate,
  autoOpenCrm: bool(),
  doNotDisturb: bool(),
  sound: bool(),
  startAtLogin: bool(),
  popupDisplay: oneOf(['primary', 'pointer'] as const),
  popupCorner: oneOf(['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const),
  popupLingerSec: integer(0, 300, 'seconds'),
  staleRingSec: integer(5, 3600, 'seconds'),
  contactsFile: absolutePath('contacts'),
  crmLookup: crmLookupCheck,
  proxyMode: oneOf(['system', 'none', 'manual'] as const),
  proxyUrl: proxyAddress,
  proxyAuth: oneOf(PROXY_AUTH_MODES),
  caFile: absolutePath('ca'),
  historyLimit: integer(0, 10_000, 'calls'),
  demoMode: bool(),
  updates: updatesCheck,
  features: featuresCheck,
  language: oneOf(LANGUAGE_SETTINGS),
};

/** Fields in the order they are checked: crmUrlTemplate after the schemes it depends on. */
const ORDER = [
  ...(Object.keys(DEFAULT_SETTINGS) as Array<keyof Settings>).filter((k) => k !== 'crmUrlTemplate'),
  'crmUrlTemplate' as const,
];

function isKnown(key: string): key is keyof Settings {
  return Object.hasOwn(DEFAULT_SETTINGS, key);
}

export function defaultSettings(): Settings {
  return structuredClone(DEFAULT_SETTINGS);
}

/**
 * Validates anything (a parsed file, a merged patch). Never throws. Each message says what is wrong,
 * what to write instead and, for a file, what was done about it.
 */
export function validateSettings(
  input: unknown,
  base: Settings = DEFAULT_SETTINGS,
): {
  settings: Settings;
  problems: SettingsProblem[];
} {
  return check(input, true, base);
}

/**
 * `base` gives the value of a field the input lacks or gets wrong: the built-in defaults, or the
 * defaults an administrator's policy presets (policy.ts).
 */
function check(
  input: unknown,
  loading: boolean,
  base: Settings = DEFAULT_SETTINGS,
): { settings: Settings; problems: SettingsProblem[] } {
  const done = (what: string) => (loading ? `; ${what}` : '');
  const settings = structuredClone(base);
  const problems: SettingsProblem[] = [];
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    problems.push(
      whole(FILE_FIELD, phrase('status.settings.not-object'), done('defaults are used')),
    );
    return { settings, problems };
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (isKnown(key)) continue;
    // The key is a name in a file someone wrote: cut, it is still recognisable.
    const name = key.slice(0, 80);
    if (isSecretName(key))
      problems.push(
        whole(key, phrase('status.settings.secret-field', { name }), done('it was removed')),
      );
    else
      problems.push(
        whole(key, phrase('status.settings.unknown-setting', { name }), done('it was dropped')),
      );
  }
  const draft = settings as unknown as Record<string, unknown>;
  for (const key of ORDER) {
    if (!Object.hasOwn(raw, key) || raw[key] === undefined) continue;
    const value = raw[key];
    if (key in LISTS) {
      const r = LISTS[key as keyof typeof LISTS](value, key, done);
      if ('error' in r) problems.push(said(key, r.error, done('the default is used')));
      else {
        draft[key] = r.value;
        problems.push(...r.problems);
      }
      continue;
    }
    const check = CHECKS[key as keyof typeof CHECKS] as Check<unknown>;
    const r = check(value, settings);
    if ('error' in r) problems.push(said(key, r.error, done('the default is used')));
    else draft[key] = r.value;
  }
  return { settings, problems };
}

/** A setting's problem: its words, and in English after the setting's name (logs, errors). */
function said(field: string, error: Phrase, done: string): SettingsProblem {
  return { field, words: [error], message: `${field} ${english([error])}${done}` };
}

/** A problem said as a whole sentence that names the setting itself (unknown, secret-looking). */
function whole(field: string, error: Phrase, done: string): SettingsProblem {
  return { field, words: [error], message: `${english([error])}${done}` };
}

/**
 * A copy of a settings file's content that is safe to keep on disk as a backup: fields that look
 * like secrets (log.ts isSecretName) are removed, and user:password@ in any address is masked.
 * Objects and lists nested deeper than any setting are left out, not copied unchecked.
 */
export function withoutSecrets(value: unknown): unknown {
  return redactTree(value, (s) => s.replace(/(\/\/)[^/@\s]*@/g, `$1${REDACTED}@`), 'drop');
}

/**
 * A change from the UI applied to `current`: the new settings, or the first problem (a patch is
 * all-or-nothing: nothing the user typed is silently replaced by a default).
 */
export function applyPatch(
  current: Settings,
  patch: Partial<Settings>,
): { ok: true; settings: Settings } | PatchProblem {
  const { settings, problems } = check({ ...current, ...patch }, false);
  const first = problems[0];
  if (!first) return { ok: true, settings };
  const words = first.words ?? [phrase('status.settings.invalid')];
  return { ok: false, field: first.field, words, message: first.message };
}
