/**
 * The settings schema, hand-written against Settings / DEFAULT_SETTINGS (types.ts). A settings file
 * is untrusted input (hand-edited, half-written, from another version): validation never throws on
 * it. Each bad field is reported by name with what to do about it and replaced by its default;
 * unknown fields are dropped with a warning; a field that looks like a secret is removed and
 * reported (secrets live only in the keychain). No message ever quotes the value it is about: the
 * messages are logged and shown, and a value typed or pasted into the wrong field may be a secret.
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
import { isLoopbackHost } from '../../../src-shared/loopback.ts';
import { isExtensionNumber, MAX_EXTENSION_DIGITS } from '../../../src-shared/extension-number.ts';
import { isSecretName, redactTree, REDACTED } from '../../../src-shared/log.ts';
import { TENANT_PATTERN } from '../../../src-shared/relay-protocol.ts';

export interface SettingsProblem {
  /** The setting's name (e.g. "baseUrl", "extensions[2]"), or "(file)" for the file as a whole. */
  field: string;
  message: string;
}

/** Thrown by SettingsStore.save/update for a value the user must correct. */
export class SettingsValidationError extends Error {
  readonly field: string;
  readonly problems: SettingsProblem[];

  constructor(problems: SettingsProblem[]) {
    const first = problems[0] ?? { field: '(settings)', message: 'invalid settings' };
    super(first.message);
    this.name = 'SettingsValidationError';
    this.field = first.field;
    this.problems = problems;
  }
}

export const FILE_FIELD = '(file)';

const PLACEHOLDERS = ['{from}', '{to}', '{call_id}', '{caller_name}'];

type Check<T> = (value: unknown, draft: Settings) => { value: T } | { error: string };
/** For lists: bad entries are dropped one by one and reported as `field[i]`. */
type ListCheck = (value: unknown) => { value: string } | { error: string };

function bool(): Check<boolean> {
  return (v) => (typeof v === 'boolean' ? { value: v } : { error: 'must be true or false' });
}

function oneOf<T extends string>(options: readonly T[]): Check<T> {
  return (v) =>
    typeof v === 'string' && (options as readonly string[]).includes(v)
      ? { value: v as T }
      : { error: `must be one of ${options.map((o) => `"${o}"`).join(', ')}` };
}

function integer(min: number, max: number, unit = ''): Check<number> {
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? { value: v }
      : { error: `must be a whole number from ${min} to ${max}${unit}` };
}

/** An http(s)/ws(s) address; `secure` is the scheme required except on this computer. */
function serviceUrl(
  v: unknown,
  secure: 'https' | 'wss',
  what: string,
): { value: string } | { error: string } {
  if (typeof v !== 'string') return { error: `must be text: the ${what}` };
  const text = v.trim();
  if (text === '') return { value: '' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      error: `is not a web address; write it in full, e.g. ${secure}://acme.example.com`,
    };
  }
  const insecure = secure === 'https' ? 'http' : 'ws';
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== secure && !(scheme === insecure && isLoopbackHost(url.hostname))) {
    return {
      error: `must start with ${secure}:// (${insecure}:// is allowed only for localhost or 127.0.0.1), so that the connection is encrypted`,
    };
  }
  if (url.username || url.password) {
    return {
      error:
        'must not contain a user name or password; the API secret is kept in the system keychain',
    };
  }
  if (url.search || url.hash || text.includes('?') || text.includes('#')) {
    return {
      error:
        'must not contain a query (?...) or fragment (#...); enter only the address, e.g. ' +
        `${secure}://acme.example.com`,
    };
  }
  return { value: url.origin + url.pathname.replace(/\/+$/, '') };
}

/** A full path of a file, or empty. */
function absolutePath(what: string): Check<string> {
  return (v) => {
    if (typeof v !== 'string') return { error: `must be text: the full path of ${what}` };
    const p = v.trim();
    if (p === '') return { value: '' };
    return p.length <= 4096 && !p.includes('\0') && isAbsolute(p)
      ? { value: p }
      : { error: `must be the full path of ${what}, or empty` };
  };
}

/**
 * The explicit proxy, http://host:port. Never a user name or password: settings files hold no
 * secrets (the proxy's password is kept in the system keychain).
 */
function proxyAddress(v: unknown): { value: string } | { error: string } {
  const example = 'e.g. http://proxy.example.com:3128';
  if (typeof v !== 'string') return { error: `must be text: the proxy's address, ${example}` };
  const text = v.trim();
  if (text === '') return { value: '' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: `is not an address; write it in full, ${example}` };
  }
  if (url.protocol !== 'http:')
    return {
      error: `must start with http:// (the proxy is reached in plain HTTP and tunnels TLS), ${example}`,
    };
  if (url.username || url.password)
    return {
      error:
        "must not contain a user name or password; the proxy's password is kept in the system keychain",
    };
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    return { error: `must be only the proxy's address and port, ${example}` };
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
) => { value: string[]; problems: SettingsProblem[] } | { error: string } {
  return (value, field, done) => {
    if (!Array.isArray(value)) return { error: 'must be a list, e.g. ["101"]' };
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
        problems.push({
          field: `${field}[${i}]`,
          message: `${field}[${i}] ${r.error}${done('it was left out')}`,
        });
    }
    if (bad > MAX_LIST_PROBLEMS)
      problems.push({
        field,
        message: `${field} has ${bad - MAX_LIST_PROBLEMS} more entries like those${done('they were left out')}`,
      });
    if (extra > 0)
      problems.push({
        field,
        message: `${field} holds more than ${maxItems} entries${done(`the ${extra} after the first ${maxItems} were left out`)}`,
      });
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
    : { error: `is not an extension number (1 to ${MAX_EXTENSION_DIGITS} digits, e.g. "101")` };
};

const phoneNumber: ListCheck = (v) => {
  const s = typeof v === 'string' ? v.trim() : undefined;
  const digits = s?.replace(/\D/g, '').length ?? 0;
  return s !== undefined && /^\+?[\d\s().-]{3,32}$/.test(s) && digits >= 3 && digits <= 17
    ? { value: s }
    : { error: 'is not a telephone number (e.g. "+1 415 555 0100")' };
};

const urlScheme: ListCheck = (v) => {
  const s = typeof v === 'string' ? normalizeScheme(v) : null;
  if (s === null) return { error: 'is not a URL scheme (e.g. "salesforce")' };
  // The same list the link gate applies (url-schemes.ts): a scheme accepted here always opens.
  if (DENIED_SCHEMES.has(s))
    return {
      error:
        s === 'http'
          ? 'is "http", which would send callers\' details unencrypted; CRM links use https'
          : `is "${s}", which can run code, read files or leak data and is never allowed for CRM links`,
    };
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
function crmTemplate(v: unknown, draft: Settings): { value: string } | { error: string } {
  if (typeof v !== 'string')
    return { error: 'must be text, e.g. https://crm.example.com/search?q={from}' };
  const text = v.trim();
  if (text === '') return { value: '' };
  if (text.length > 2000) return { error: 'is longer than 2000 characters' };
  const unknown = (text.match(/\{[^}]*\}/g) ?? []).filter((p) => !PLACEHOLDERS.includes(p));
  if (unknown.length > 0)
    return { error: `has unknown placeholder ${unknown[0]}; use ${PLACEHOLDERS.join(', ')}` };
  let url: URL;
  try {
    url = new URL(text.replaceAll(/\{[a-z_]+\}/g, 'placeholder0'));
  } catch {
    return { error: 'is not a web address; e.g. https://crm.example.com/search?q={from}' };
  }
  const scheme = url.protocol.slice(0, -1);
  if (!allowedSchemeSet(draft.crmAllowedSchemes).has(scheme)) {
    return {
      error: DENIED_SCHEMES.has(scheme)
        ? `uses "${scheme}:", which links are never opened with; use https`
        : `uses "${scheme}:", which is not in crmAllowedSchemes (${draft.crmAllowedSchemes.join(', ') || 'empty'}); an administrator can add it there`,
    };
  }
  if (url.username || url.password) return { error: 'must not contain a user name or password' };
  const head = text.slice(0, text.indexOf(':') + 1 + (url.host ? 2 + url.host.length : 0));
  if (head.includes('{'))
    return {
      error:
        'may use placeholders only after the host name (in the path or query), so a caller cannot choose where the link goes',
    };
  return { value: text };
}

/**
 * The `updates` object: each field checked, a missing one takes its default, an unknown one is an
 * error (a misspelt `enabled` must not leave updates on unnoticed).
 */
function updatesCheck(v: unknown): { value: UpdateSettings } | { error: string } {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return {
      error: 'must be an object, e.g. {"enabled": true, "channel": "latest", "feedUrl": ""}',
    };
  const raw = v as Record<string, unknown>;
  const unknownKey = Object.keys(raw).find((k) => !Object.hasOwn(DEFAULT_SETTINGS.updates, k));
  if (unknownKey)
    return {
      error: `has unknown field "${unknownKey.slice(0, 40)}" (known: enabled, channel, feedUrl)`,
    };
  const value = { ...DEFAULT_SETTINGS.updates };
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled !== 'boolean') return { error: 'enabled must be true or false' };
    value.enabled = raw.enabled;
  }
  if (raw.channel !== undefined) {
    if (typeof raw.channel !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(raw.channel.trim()))
      return { error: 'channel must be a channel name such as "latest" or "beta"' };
    value.channel = raw.channel.trim();
  }
  if (raw.feedUrl !== undefined) {
    const feed = serviceUrl(raw.feedUrl, 'https', 'update feed address from your administrator');
    if ('error' in feed) return { error: `feedUrl ${feed.error}` };
    value.feedUrl = feed.value;
  }
  return { value };
}

/** The `features` object: each a boolean, a missing one on, an unknown one an error. */
function featuresCheck(v: unknown): { value: FeatureSettings } | { error: string } {
  const known = Object.keys(DEFAULT_SETTINGS.features).join(', ');
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return { error: `must be an object, e.g. {"voicemail": true, "sms": false} (known: ${known})` };
  const raw = v as Record<string, unknown>;
  const value = { ...DEFAULT_SETTINGS.features };
  for (const [key, on] of Object.entries(raw)) {
    if (!Object.hasOwn(value, key))
      return { error: `has unknown field "${key.slice(0, 40)}" (known: ${known})` };
    if (typeof on !== 'boolean') return { error: `${key} must be true or false` };
    value[key as keyof FeatureSettings] = on;
  }
  return { value };
}

const LOOKUP_TEMPLATE_WORDS: Record<TemplateProblem, string> = {
  empty: 'is needed for the generic lookup, e.g. https://crm.example.com/api/lookup?phone={number}',
  'too-long': 'is longer than 2048 characters',
  'not-a-url': 'is not a complete address; write it in full, starting with https://',
  'not-https': 'must start with https://, so that callers’ numbers travel encrypted',
  credentials:
    'must not contain a user name or password; choose Basic sign-in and store them in Settings (the keychain)',
  'unknown-placeholder': 'may use only the placeholders {number} and {digits}',
  'placeholder-outside-query':
    'may put {number} or {digits} only as the value of a query parameter (…?phone={number}), so a caller cannot change where the lookup goes',
  'no-placeholder': 'must contain {number} or {digits} where the caller’s number goes',
};

/** The `crmLookup` object: each field checked, a missing one takes its default, an unknown one is an error. */
function crmLookupCheck(v: unknown): { value: CrmLookupSettings } | { error: string } {
  const known = Object.keys(DEFAULT_SETTINGS.crmLookup).join(', ');
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return { error: `must be an object, e.g. {"provider": "hubspot"} (known: ${known})` };
  const raw = v as Record<string, unknown>;
  const unknownKey = Object.keys(raw).find((k) => !Object.hasOwn(DEFAULT_SETTINGS.crmLookup, k));
  if (unknownKey)
    return { error: `has unknown field "${unknownKey.slice(0, 40)}" (known: ${known})` };
  const value = { ...DEFAULT_SETTINGS.crmLookup, ...raw } as Record<string, unknown>;
  const provider = oneOf(['none', 'generic', 'hubspot'] as const)(value.provider, DEFAULT_SETTINGS);
  if ('error' in provider) return { error: `provider ${provider.error}` };
  const auth = oneOf(['none', 'bearer', 'basic'] as const)(value.auth, DEFAULT_SETTINGS);
  if ('error' in auth) return { error: `auth ${auth.error}` };
  const timeout = integer(
    CRM_TIMEOUT_SEC.min,
    CRM_TIMEOUT_SEC.max,
    ' seconds',
  )(value.timeoutSec, DEFAULT_SETTINGS);
  if ('error' in timeout) return { error: `timeoutSec ${timeout.error}` };
  if (typeof value.urlTemplate !== 'string') return { error: 'urlTemplate must be text' };
  const urlTemplate = value.urlTemplate.trim();
  if (provider.value === 'generic' || urlTemplate !== '') {
    const problem = lookupTemplateProblem(urlTemplate);
    if (problem) return { error: `urlTemplate ${LOOKUP_TEMPLATE_WORDS[problem]}` };
  }
  const fields = ['nameField', 'companyField', 'recordUrlField'] as const;
  for (const f of fields) {
    const mapping = value[f];
    if (typeof mapping !== 'string' || !fieldMappingOk(mapping))
      return {
        error: `${f} must be a path into the JSON answer such as "name" or "contact.company" (up to 4, separated by spaces)`,
      };
  }
  if (provider.value === 'generic' && String(value.nameField).trim() === '')
    return { error: 'nameField is needed: where the caller’s name is in the answer, e.g. "name"' };
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
  version: (v) =>
    v === 1
      ? { value: 1 }
      : {
          error:
            'is not one this Screenpop understands (expected 1); the file may come from a newer version',
        },
  phoneSystem: oneOf(PHONE_SYSTEMS),
  baseUrl: (v) => serviceUrl(v, 'https', "tenant's base address from your administrator"),
  apiKey: (v) =>
    typeof v === 'string' && /^[\x21-\x7e]{0,256}$/.test(v.trim())
      ? { value: v.trim() }
      : { error: 'must be the API key as shown in the admin console (no spaces)' },
  defaultRegion: (v) =>
    typeof v === 'string' && /^[A-Za-z]{2}$/.test(v.trim())
      ? { value: v.trim().toUpperCase() }
      : { error: 'must be a two-letter country code, e.g. "US" or "GB"' },
  eventSource: oneOf(['auto', 'direct', 'relay'] as const),
  relayUrl: (v) => serviceUrl(v, 'wss', "webhook relay's address"),
  // The relay's own rule for tenant names (a name it would refuse is refused here, by the field).
  relayTenant: (v) =>
    typeof v === 'string' && (v.trim() === '' || TENANT_PATTERN.test(v.trim()))
      ? { value: v.trim() }
      : {
          error:
            'must be the tenant name your relay administrator gave you (up to 63 letters, digits, ".", "_" or "-" after a letter or digit, e.g. "acme"), or empty to use the first part of the service address',
        },
  connectionMode: oneOf(CONNECTION_MODES),
  crmUrlTemplate: crmTemplate,
  autoOpenCrm: bool(),
  doNotDisturb: bool(),
  sound: bool(),
  startAtLogin: bool(),
  popupDisplay: oneOf(['primary', 'pointer'] as const),
  popupCorner: oneOf(['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const),
  popupLingerSec: integer(0, 300, ' seconds'),
  staleRingSec: integer(5, 3600, ' seconds'),
  contactsFile: absolutePath('a CSV or vCard file (e.g. /home/me/contacts.vcf)'),
  crmLookup: crmLookupCheck,
  proxyMode: oneOf(['system', 'none', 'manual'] as const),
  proxyUrl: proxyAddress,
  caFile: absolutePath('a PEM file of certificate authorities (e.g. /etc/screenpop/ca.pem)'),
  historyLimit: integer(0, 10_000, ' calls'),
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
    problems.push({
      field: FILE_FIELD,
      message: `the settings are not a JSON object${done('defaults are used')}`,
    });
    return { settings, problems };
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (isKnown(key)) continue;
    if (isSecretName(key)) {
      problems.push({
        field: key,
        message: `"${key}" looks like a secret. Secrets are kept only in the system keychain, so it cannot be kept in the settings file${done('it was removed')}. Enter the API secret in Settings instead`,
      });
    } else {
      problems.push({
        field: key,
        message: `"${key}" is not a Screenpop setting (check its spelling)${done('it was dropped')}`,
      });
    }
  }
  const draft = settings as unknown as Record<string, unknown>;
  for (const key of ORDER) {
    if (!Object.hasOwn(raw, key) || raw[key] === undefined) continue;
    const value = raw[key];
    if (key in LISTS) {
      const r = LISTS[key as keyof typeof LISTS](value, key, done);
      if ('error' in r)
        problems.push({ field: key, message: `${key} ${r.error}${done('the default is used')}` });
      else {
        draft[key] = r.value;
        problems.push(...r.problems);
      }
      continue;
    }
    const check = CHECKS[key as keyof typeof CHECKS] as Check<unknown>;
    const r = check(value, settings);
    if ('error' in r)
      problems.push({ field: key, message: `${key} ${r.error}${done('the default is used')}` });
    else draft[key] = r.value;
  }
  return { settings, problems };
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
): { ok: true; settings: Settings } | { ok: false; field: string; message: string } {
  const { settings, problems } = check({ ...current, ...patch }, false);
  const first = problems[0];
  return first ? { ok: false, field: first.field, message: first.message } : { ok: true, settings };
}
