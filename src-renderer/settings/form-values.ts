/**
 * The settings form's values as the inputs hold them (lists as text, numbers as text) and the
 * conversions to and from Settings. Validation that decides is main's (SaveResult); here we only
 * turn what the user typed into the patch's shape.
 */
import type { SettingsPatch } from '../../src-main/ipc/contract.ts';
import { CRM_TIMEOUT_SEC } from '../../src-shared/ui/settings-limits.ts';
import { regionCode } from '../../src-shared/rules/phone-number-rules.ts';
import type {
  ConnectionMode,
  CrmLookupAuth,
  CrmLookupProvider,
  EventSourceMode,
  LanguageSetting,
  PhoneSystem,
  PopupCorner,
  PopupDisplay,
  ProxyAuthMode,
  ProxyMode,
  Settings,
} from '../../src-main/core/settings/types.ts';
import type { MessageId } from '../../src-shared/i18n/catalogue.ts';
import type { CallLogCalls } from '../../src-shared/rules/call-log-rule.ts';

export interface FormValues {
  phoneSystem: PhoneSystem;
  /** API key of the phone system, or signed in to the organisation's relay. */
  connectionMode: ConnectionMode;
  baseUrl: string;
  apiKey: string;
  /** A new secret typed by the user; empty keeps the stored one. Never filled from main. */
  secret: string;
  extensions: string;
  dids: string;
  defaultRegion: string;
  eventSource: EventSourceMode;
  relayUrl: string;
  relayTenant: string;
  proxyMode: ProxyMode;
  proxyUrl: string;
  proxyAuth: ProxyAuthMode;
  crmUrlTemplate: string;
  autoOpenCrm: boolean;
  answerFromDeskPhone: boolean;
  deskPhoneAddress: string;
  contactsFile: string;
  /** Settings.crmLookup, flat (one field each). */
  crmProvider: CrmLookupProvider;
  crmUrl: string;
  crmAuth: CrmLookupAuth;
  crmNameField: string;
  crmCompanyField: string;
  crmRecordField: string;
  crmTimeoutSec: string;
  /** A new CRM token (or user:password) typed by the user; empty keeps the stored one. */
  crmSecret: string;
  /** The generic connector's call log: its receiver, and a new signing secret (empty keeps it). */
  crmLogUrl: string;
  crmLogSecret: string;
  doNotDisturb: boolean;
  sound: boolean;
  startAtLogin: boolean;
  popupDisplay: PopupDisplay;
  popupCorner: PopupCorner;
  popupLingerSec: string;
  /** Which calls are logged into the CRM; the note card's time after a call; its outcome choices. */
  callLogCalls: CallLogCalls;
  callNoteSec: string;
  /** One choice a line. */
  callLogChoices: string;
  /** Settings.features, one checkbox each (flat, so each is merged and saved on its own). */
  featureVoicemail: boolean;
  featureSms: boolean;
  featureTrunk: boolean;
  featurePresence: boolean;
  language: LanguageSetting;
}

/** Splits a comma-, semicolon- or line-separated list; trims, drops blanks and repeats. */
export function parseList(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[,;\n\r]+/)) {
    const item = part.trim();
    if (item) seen.add(item);
  }
  return [...seen];
}

export function formatList(items: readonly string[]): string {
  return items.join(', ');
}

export function toFormValues(settings: Settings): FormValues {
  return {
    phoneSystem: settings.phoneSystem,
    connectionMode: settings.connectionMode,
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    secret: '',
    extensions: formatList(settings.extensions),
    dids: formatList(settings.dids),
    defaultRegion: settings.defaultRegion,
    eventSource: settings.eventSource,
    relayUrl: settings.relayUrl,
    relayTenant: settings.relayTenant,
    proxyMode: settings.proxyMode,
    proxyUrl: settings.proxyUrl,
    proxyAuth: settings.proxyAuth,
    crmUrlTemplate: settings.crmUrlTemplate,
    autoOpenCrm: settings.autoOpenCrm,
    answerFromDeskPhone: settings.answerFromDeskPhone,
    deskPhoneAddress: settings.deskPhoneAddress,
    contactsFile: settings.contactsFile,
    crmProvider: settings.crmLookup.provider,
    crmUrl: settings.crmLookup.urlTemplate,
    crmAuth: settings.crmLookup.auth,
    crmNameField: settings.crmLookup.nameField,
    crmCompanyField: settings.crmLookup.companyField,
    crmRecordField: settings.crmLookup.recordUrlField,
    crmTimeoutSec: String(settings.crmLookup.timeoutSec),
    crmSecret: '',
    crmLogUrl: settings.crmLookup.logUrl,
    crmLogSecret: '',
    doNotDisturb: settings.doNotDisturb,
    sound: settings.sound,
    startAtLogin: settings.startAtLogin,
    popupDisplay: settings.popupDisplay,
    popupCorner: settings.popupCorner,
    popupLingerSec: String(settings.popupLingerSec),
    callLogCalls: settings.callLogCalls,
    callNoteSec: String(settings.callNoteSec),
    callLogChoices: settings.callLogChoices.join('\n'),
    featureVoicemail: settings.features.voicemail,
    featureSms: settings.features.sms,
    featureTrunk: settings.features.trunk,
    featurePresence: settings.features.presence,
    language: settings.language,
  };
}

/** A form error names its field and its words (a catalogue id: the form translates it). */
export type PatchResult =
  | { ok: true; patch: SettingsPatch }
  | { ok: false; field: string; message: MessageId; values?: Record<string, number> };

export function toPatch(values: FormValues): PatchResult {
  const linger = values.popupLingerSec.trim();
  const lingerSec = Number(linger);
  if (linger === '' || !Number.isFinite(lingerSec) || lingerSec < 0) {
    return {
      ok: false,
      field: 'popupLingerSec',
      message: 'settings.error.linger',
    };
  }
  const note = values.callNoteSec.trim();
  const noteSec = Number(note);
  if (note === '' || !Number.isFinite(noteSec) || noteSec < 0)
    return { ok: false, field: 'callNoteSec', message: 'settings.error.linger' };
  // The typed text must become a number; its range is the setting's own (CRM_TIMEOUT_SEC).
  const timeout = values.crmTimeoutSec.trim();
  const timeoutSec = Number(timeout);
  const { min, max } = CRM_TIMEOUT_SEC;
  if (!/^\d{1,3}$/.test(timeout) || timeoutSec < min || timeoutSec > max)
    return {
      ok: false,
      field: 'crmTimeoutSec',
      message: 'settings.error.crm-timeout',
      values: { min, max },
    };
  const patch: SettingsPatch = {
    settings: {
      phoneSystem: values.phoneSystem,
      connectionMode: values.connectionMode,
      baseUrl: values.baseUrl.trim(),
      apiKey: values.apiKey.trim(),
      extensions: parseList(values.extensions),
      dids: parseList(values.dids),
      // The core's one rule; what it refuses goes as typed, for main to say why.
      defaultRegion: regionCode(values.defaultRegion) ?? values.defaultRegion.trim(),
      eventSource: values.eventSource,
      relayUrl: values.relayUrl.trim(),
      relayTenant: values.relayTenant.trim(),
      proxyMode: values.proxyMode,
      proxyUrl: values.proxyUrl.trim(),
      proxyAuth: values.proxyAuth,
      crmUrlTemplate: values.crmUrlTemplate.trim(),
      autoOpenCrm: values.autoOpenCrm,
      answerFromDeskPhone: values.answerFromDeskPhone,
      deskPhoneAddress: values.deskPhoneAddress.trim(),
      contactsFile: values.contactsFile.trim(),
      crmLookup: {
        provider: values.crmProvider,
        urlTemplate: values.crmUrl.trim(),
        auth: values.crmAuth,
        nameField: values.crmNameField.trim(),
        companyField: values.crmCompanyField.trim(),
        recordUrlField: values.crmRecordField.trim(),
        timeoutSec,
        logUrl: values.crmLogUrl.trim(),
      },
      doNotDisturb: values.doNotDisturb,
      sound: values.sound,
      startAtLogin: values.startAtLogin,
      popupDisplay: values.popupDisplay,
      popupCorner: values.popupCorner,
      popupLingerSec: lingerSec,
      callLogCalls: values.callLogCalls,
      callNoteSec: noteSec,
      // One choice a line (a choice may hold a comma); main checks each.
      callLogChoices: values.callLogChoices
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== ''),
      features: {
        voicemail: values.featureVoicemail,
        sms: values.featureSms,
        trunk: values.featureTrunk,
        presence: values.featurePresence,
      },
      language: values.language,
    },
  };
  // The secret travels only when the user typed a new one, and only to be put in the keychain;
  // never in organisation mode, which keeps no API secret (its field is not even shown).
  if (values.secret !== '' && values.connectionMode !== 'organisation')
    patch.secret = values.secret;
  if (values.crmSecret !== '') patch.crmSecret = values.crmSecret;
  if (values.crmLogSecret !== '') patch.crmLogSecret = values.crmLogSecret;
  return { ok: true, patch };
}

/**
 * Only the settings the user changed since `baseline` (what main last sent), so that saving the
 * form cannot undo a change made meanwhile elsewhere (Do Not Disturb from the tray menu).
 */
export function changedSettings(patch: SettingsPatch, baseline: FormValues): SettingsPatch {
  const before = toPatch(baseline);
  if (!before.ok) return patch;
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch.settings)) {
    const old = (before.patch.settings as Record<string, unknown>)[key];
    if (JSON.stringify(value) !== JSON.stringify(old)) settings[key] = value;
  }
  const changed: SettingsPatch = { settings: settings as SettingsPatch['settings'] };
  if (patch.secret !== undefined) changed.secret = patch.secret;
  if (patch.crmSecret !== undefined) changed.crmSecret = patch.crmSecret;
  if (patch.crmLogSecret !== undefined) changed.crmLogSecret = patch.crmLogSecret;
  return changed;
}

/** `current` with every field the user left as it was in `before` moved on to `incoming`. */
export function mergeUntouched(
  current: FormValues,
  before: FormValues,
  incoming: FormValues,
): FormValues {
  const next = { ...current };
  for (const key of Object.keys(incoming) as (keyof FormValues)[]) {
    if (current[key] === before[key]) (next as Record<string, unknown>)[key] = incoming[key];
  }
  return next;
}
