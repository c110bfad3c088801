/**
 * The shape of the user's settings. Pure types and defaults, importing only the shipped languages
 * (src-shared/i18n/locales.ts, itself free of imports), so that the renderer (through the IPC
 * contract) and the main process compile against the same definition. Validation of
 * files and patches lives beside it in the settings store. The API secret is never part of Settings:
 * it lives only in the OS keychain.
 */
import type { CallLogCalls } from '../../../src-shared/rules/call-log-rule.ts';
import type { ProxyAuthMode } from '../../../src-shared/net/proxy-auth.ts';
import { LOCALES, type ShippedLocale } from '../../../src-shared/i18n/locales.ts';

export type EventSourceMode = 'auto' | 'direct' | 'relay';
import type { PhoneSystem } from '../../../src-shared/phone-systems/names.ts';
export { PHONE_SYSTEMS, type PhoneSystem } from '../../../src-shared/phone-systems/names.ts';
/**
 * How this computer gets its calls: 'api-key' = with the phone system's API key and secret (in
 * the keychain); 'organisation' = signed in to the organisation's relay as one of its users (single
 * sign-on or an enrolment code): no API key or secret on the machine, only the user's own calls.
 */
export type ConnectionMode = 'api-key' | 'organisation';
export const CONNECTION_MODES: readonly ConnectionMode[] = ['api-key', 'organisation'];
export type PopupDisplay = 'primary' | 'pointer';
export type PopupCorner = 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right';

/**
 * Updates from the organisation's HTTPS feed (electron-updater's generic provider). A policy can
 * later fix these for every user.
 */
export interface UpdateSettings {
  /** false: never check or install (for installations the organisation updates itself). */
  enabled: boolean;
  /** The feed's channel: latest (default), beta, ... (the <channel>*.yml files on the feed). */
  channel: string;
  /** https:// address of the feed; empty: the feed this build was published with. */
  feedUrl: string;
}

/**
 * The features beyond calls, each on its own event code and scope (docs/wire-protocol.md section 6):
 * off means not subscribed at all.
 */
export interface FeatureSettings {
  /** Voicemail for my extensions: a notification and a History entry. */
  voicemail: boolean;
  /** SMS to my DIDs or extensions: a notification with a safe preview and a History entry. */
  sms: boolean;
  /** A lasting warning while a trunk is not registered (calls from outside may not reach you). */
  trunk: boolean;
  /** My own presence in the tray (do not disturb said so). */
  presence: boolean;
}

/** Which CRM is asked who is calling (src-main/core/crm/): none, an in-house JSON API, HubSpot. */
export type CrmLookupProvider = 'none' | 'generic' | 'hubspot';
export type CrmLookupAuth = 'none' | 'bearer' | 'basic';

/**
 * The CRM lookup: after a call pops, its number is looked up and the card filled in. The token or
 * password is never here: it lives in the keychain (crm/credentials.ts says under which account).
 */
export interface CrmLookupSettings {
  provider: CrmLookupProvider;
  /** generic: https address with {number} (E.164) or {digits} as a query value. */
  urlTemplate: string;
  /** generic: how to sign in (the token, or user:password, from the keychain). */
  auth: CrmLookupAuth;
  /** generic: where in the JSON answer the name, company and record link are (`a.b.0.c`). */
  nameField: string;
  companyField: string;
  recordUrlField: string;
  /** Seconds to wait for an answer (CRM_TIMEOUT_SEC). */
  timeoutSec: number;
  /**
   * generic: where each call is logged (issue 39), one signed POST per call
   * (docs/crm/call-log-webhook.md); https, or http only to this computer; empty: no call log.
   * Its signing secret is in the keychain (call-log/build.ts crmLogKeychainAccount), never here.
   */
  logUrl: string;
}

export { CRM_TIMEOUT_SEC } from '../../../src-shared/ui/settings-limits.ts';

export interface Settings {
  /** Schema version of the file. */
  version: 1;
  /** The phone system behind `baseUrl` (its token calls, stream and events differ). */
  phoneSystem: PhoneSystem;
  /** The tenant's base address, e.g. https://acme.example.com (https; http only for localhost). */
  baseUrl: string;
  /** The API key (sent as `username`); not secret by itself. Empty until onboarding. */
  apiKey: string;
  /** The user's extension numbers, e.g. ["101"]. A ring to any of them pops. */
  extensions: string[];
  /** Telephone numbers (DIDs) that reach the user, in any common format. */
  dids: string[];
  /** Default region for numbers written without a country code (ISO 3166 alpha-2), e.g. "US". */
  defaultRegion: string;
  eventSource: EventSourceMode;
  /** https:// (or wss://) address of the organisation's webhook relay; empty when there is none. */
  relayUrl: string;
  /**
   * The tenant's name on the relay (its stream is <relayUrl>/v1/stream/<tenant>), as the relay's
   * administrator configured it. Empty: the first label of the service's host name
   * (acme.example.com -> acme); a service reached by IP address or localhost then needs it set.
   */
  relayTenant: string;
  /**
   * 'organisation': the relay (relayUrl, relayTenant) alone, signed in as the user; baseUrl,
   * apiKey, extensions and dids are not used (the relay says whose calls these are) and no API
   * secret is kept. An administrator presets and locks it with the relay's address and tenant.
   */
  connectionMode: ConnectionMode;
  /** CRM link with {from} {to} {call_id} {caller_name} placeholders; empty disables the action. */
  crmUrlTemplate: string;
  /** URL schemes the CRM link may use; administrators may add e.g. "salesforce". */
  crmAllowedSchemes: string[];
  /** Open the CRM link by itself when a call rings. */
  autoOpenCrm: boolean;
  /**
   * Ask before a tel:/callto:/sip: link dials (issue 38). Always on for a user; only the
   * organisation's policy may lock it off for managed fleets (core/links/dial-link.ts).
   */
  confirmDialLinks: boolean;
  /**
   * Answer and Decline on a ringing popup through the user's desk phone (uaCSTA, issue 38;
   * docs/phone-systems/yeastar-p-series.md section 10, "Remote answer"): off unless the user (or a
   * policy) turns it on, and only with `deskPhoneAddress` set.
   */
  answerFromDeskPhone: boolean;
  /** The desk phone's IP address, with an optional SIP port (src-shared/rules/desk-phone-address.ts). */
  deskPhoneAddress: string;
  doNotDisturb: boolean;
  sound: boolean;
  startAtLogin: boolean;
  popupDisplay: PopupDisplay;
  popupCorner: PopupCorner;
  /** Seconds the popup stays after the call stops ringing. */
  popupLingerSec: number;
  /** A ringing event older than this never pops (seconds). */
  staleRingSec: number;
  /**
   * Which calls are logged into the CRM (src-shared/rules/call-log-rule.ts): answered only,
   * answered and missed, none. A colleague's call never. A policy can lock it like any setting.
   */
  callLogCalls: CallLogCalls;
  /** Seconds the card of a call the user answered keeps its note after the call ends (then logs). */
  callNoteSec: number;
  /** The outcome choices the note card offers (plain text, sent to the CRM as the disposition). */
  callLogChoices: string[];
  /** Optional contacts file (CSV or vCard) for caller names; empty for none. */
  contactsFile: string;
  /** Looking callers up in a CRM after the pop. */
  crmLookup: CrmLookupSettings;
  /** How many calls the history keeps. */
  historyLimit: number;
  /** Use the embedded simulator instead of a real service. */
  demoMode: boolean;
  updates: UpdateSettings;
  /**
   * How connections reach the service and the relay: 'system' = the system's proxy settings (PAC
   * and WPAD included), 'none' = direct, 'manual' = `proxyUrl`.
   */
  proxyMode: ProxyMode;
  /** The explicit proxy for 'manual', http://host:port (its password is in the keychain). */
  proxyUrl: string;
  /**
   * How a proxy's request for a sign-in (407) is answered (src-shared/net/proxy-auth.ts):
   * 'automatic' = Negotiate (Kerberos, the user's own sign-in), NTLM, then Basic, as the proxy
   * offers and this computer can; 'basic' = only Basic with a configured user name and password;
   * 'none' = never. A policy can lock it like any setting.
   */
  proxyAuth: ProxyAuthMode;
  /**
   * A PEM file of certificate authorities trusted besides the system's (a private CA, a
   * TLS-inspecting proxy's); empty for none. Meant to be set by the administrator's policy.
   */
  caFile: string;
  features: FeatureSettings;
  /** The app's language; 'system' follows the OS. A policy can lock it like any setting. */
  language: LanguageSetting;
}

export type ProxyMode = 'system' | 'none' | 'manual';
export type { ProxyAuthMode } from '../../../src-shared/net/proxy-auth.ts';

/**
 * The language of every word Screenpop shows: 'system' follows the operating system's preferred
 * languages (English when none of them is shipped), or one of the shipped languages
 * (src-shared/i18n/locales.ts LOCALES, the one list of them).
 */
export type LanguageSetting = 'system' | ShippedLocale;
export const LANGUAGE_SETTINGS: readonly LanguageSetting[] = ['system', ...LOCALES];

export const DEFAULT_SETTINGS: Settings = {
  version: 1,
  phoneSystem: 'standard',
  baseUrl: '',
  apiKey: '',
  extensions: [],
  dids: [],
  defaultRegion: 'US',
  eventSource: 'auto',
  relayUrl: '',
  relayTenant: '',
  connectionMode: 'api-key',
  crmUrlTemplate: '',
  crmAllowedSchemes: ['https'],
  autoOpenCrm: false,
  doNotDisturb: false,
  sound: true,
  startAtLogin: false,
  confirmDialLinks: true,
  answerFromDeskPhone: false,
  deskPhoneAddress: '',
  popupDisplay: 'primary',
  popupCorner: 'bottom-right',
  popupLingerSec: 4,
  staleRingSec: 45,
  callLogCalls: 'answered',
  callNoteSec: 120,
  callLogChoices: ['Resolved', 'Follow-up', 'Left a message', 'Wrong number'],
  contactsFile: '',
  crmLookup: {
    provider: 'none',
    urlTemplate: '',
    auth: 'bearer',
    nameField: 'name',
    companyField: 'company',
    recordUrlField: 'url',
    timeoutSec: 3,
    logUrl: '',
  },
  historyLimit: 500,
  demoMode: false,
  updates: { enabled: true, channel: 'latest', feedUrl: '' },
  proxyMode: 'system',
  proxyUrl: '',
  proxyAuth: 'automatic',
  caFile: '',
  features: { voicemail: true, sms: true, trunk: true, presence: true },
  language: 'system',
};
