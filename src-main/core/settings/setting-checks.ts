/**
 * Each setting's check (the schema of Settings, written with settings-check-kit.ts): what every
 * field accepts, the lists, the object settings (CRM lookup, updates, features), and the order
 * the driver (validate-settings.ts) checks them in.
 */
import {
  CALL_LOG_CALLS,
  MAX_CALL_LOG_CHOICE_CHARS,
  MAX_CALL_LOG_CHOICES,
} from '../../../src-shared/rules/call-log-rule.ts';
import { isAbsolute } from 'node:path';
import { displayText } from '../../../src-shared/ui/text.ts';
import { DENIED_SCHEMES, allowedSchemeSet, normalizeScheme } from '../links/url-schemes.ts';
import type { CrmLookupSettings, FeatureSettings, Settings, UpdateSettings } from './types.ts';
import { fieldMappingOk, lookupTemplateProblem, type TemplateProblem } from '../crm/template.ts';
import {
  CONNECTION_MODES,
  CRM_TIMEOUT_SEC,
  DEFAULT_SETTINGS,
  LANGUAGE_SETTINGS,
  PHONE_SYSTEMS,
} from './types.ts';
import { HTTP_SCHEMES, isSecureOrLoopback, WS_SCHEMES } from '../../../src-shared/net/loopback.ts';
import {
  isDid,
  isExtensionNumber,
  MAX_EXTENSION_DIGITS,
  regionCode,
} from '../../../src-shared/rules/phone-number-rules.ts';
import { parseDeskPhoneAddress } from '../../../src-shared/rules/desk-phone-address.ts';
import { TENANT_PATTERN } from '../../../src-shared/relay/relay-protocol.ts';
import { PROXY_AUTH_MODES } from '../../../src-shared/net/proxy-auth.ts';
import { phrase, type Phrase } from '../../../src-shared/i18n/phrase.ts';
import {
  fillPlaceholders,
  LOOKUP_PLACEHOLDERS,
  MAX_TEMPLATE,
  unknownCallPlaceholder,
} from '../crm/placeholders.ts';
import {
  inner,
  integer,
  bool,
  oneOf,
  problem,
  stringList,
  type Check,
  type ListCheck,
  type Problem,
} from './settings-check-kit.ts';

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

const ADDRESS_EXAMPLES = {
  https: 'https://acme.example.com',
  relay: 'https://relay.example.org',
  'call-log': 'https://crm.example.com/screenpop/calls',
} as const;

/**
 * An address of the service (`https`), of the relay, or of the generic connector's call-log
 * receiver (`call-log`, https too): `secure` is the scheme required except on this computer. The
 * relay is reached at its https address as the administrator gives it (its stream is the same
 * address with wss, which is accepted too: relay-source.ts's relayStreamUrl is the one place that
 * maps one to the other).
 */
function serviceUrl(
  v: unknown,
  secure: 'https' | 'relay' | 'call-log',
): { value: string } | Problem {
  const example = ADDRESS_EXAMPLES[secure];
  const read = readAddress(v, 'address', example);
  if (!('url' in read)) return 'error' in read ? read : { value: '' };
  const { url, text } = read;
  if (secure === 'relay') {
    if (!isSecureOrLoopback(url, [HTTP_SCHEMES, WS_SCHEMES]))
      return problem('status.settings.relay-address-insecure');
  } else if (!isSecureOrLoopback(url))
    return problem('status.settings.address-insecure', { secure: 'https', insecure: 'http' });
  if (url.username || url.password)
    return problem(
      secure === 'call-log'
        ? 'status.settings.log-url-credentials'
        : 'status.settings.address-credentials',
    );
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

/** One outcome choice of the note card: plain text on one line, 1 to 40 characters. */
const callLogChoice: ListCheck = (v) => {
  const s = typeof v === 'string' ? v.trim() : '';
  // No control, bidi or zero-width characters: the choice is shown and sent as it is.
  return s !== '' && s.length <= MAX_CALL_LOG_CHOICE_CHARS && displayText(s) === s
    ? { value: s }
    : problem('status.settings.call-log-choice', { max: String(MAX_CALL_LOG_CHOICE_CHARS) });
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

export const LISTS = {
  extensions: stringList(100, extensionNumber),
  dids: stringList(100, phoneNumber),
  crmAllowedSchemes: stringList(20, urlScheme),
  callLogChoices: stringList(MAX_CALL_LOG_CHOICES, callLogChoice),
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
  // The call log's receiver: the same rule as every address a secret's signature crosses.
  const logUrl = serviceUrl(value.logUrl, 'call-log');
  if ('error' in logUrl) return inner('logUrl', logUrl.error);
  return {
    value: {
      provider: provider.value,
      urlTemplate,
      auth: auth.value,
      nameField: String(value.nameField).trim(),
      companyField: String(value.companyField).trim(),
      recordUrlField: String(value.recordUrlField).trim(),
      timeoutSec: timeout.value,
      logUrl: logUrl.value,
    },
  };
}

export const CHECKS: { [K in Exclude<keyof Settings, keyof typeof LISTS>]: Check<Settings[K]> } = {
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
  confirmDialLinks: bool(),
  answerFromDeskPhone: bool(),
  deskPhoneAddress: (v) => {
    if (typeof v !== 'string') return problem('status.settings.desk-phone-address');
    if (v.trim() === '') return { value: '' };
    const a = parseDeskPhoneAddress(v);
    if (!a) return problem('status.settings.desk-phone-address');
    const host = a.host.includes(':') ? `[${a.host}]` : a.host;
    return { value: a.port === undefined ? host : `${host}:${a.port}` };
  },
  doNotDisturb: bool(),
  sound: bool(),
  startAtLogin: bool(),
  popupDisplay: oneOf(['primary', 'pointer'] as const),
  popupCorner: oneOf(['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const),
  popupLingerSec: integer(0, 300, 'seconds'),
  staleRingSec: integer(5, 3600, 'seconds'),
  callLogCalls: oneOf(CALL_LOG_CALLS),
  callNoteSec: integer(0, 900, 'seconds'),
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
export const ORDER = [
  ...(Object.keys(DEFAULT_SETTINGS) as Array<keyof Settings>).filter((k) => k !== 'crmUrlTemplate'),
  'crmUrlTemplate' as const,
];
