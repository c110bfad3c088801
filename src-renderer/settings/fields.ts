/**
 * Every word the settings form shows about its fields, in one place: each field's label, help,
 * placeholder and the errors the form itself finds (main's errors arrive in words from main), and
 * the sections they belong to, in the window's language (catalogue namespace `settings`). The form
 * looks fields up here by name, so a mark such as "locked by your administrator" is added once per
 * field, here. Placeholders that are examples of data (addresses) stay as they are in every
 * language.
 */
import { CALL_LOG_CALLS } from '../../src-shared/rules/call-log-rule.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { LOCALES } from '../../src-shared/i18n/locales.ts';
import type {
  LanguageSetting,
  PhoneSystem,
  ProxyAuthMode,
} from '../../src-main/core/settings/types.ts';
import { PHONE_SYSTEMS } from '../../src-shared/phone-systems/names.ts';
import { CRM_TIMEOUT_SEC } from '../../src-shared/ui/settings-limits.ts';
import type { FormValues } from './form-values.ts';

export type SectionId =
  'connection' | 'phone' | 'popup' | 'crm' | 'notifications' | 'language' | 'advanced';

export interface SectionText {
  id: SectionId;
  title: string;
  /** One line under the title: what the section is for. */
  summary: string;
}

export type FieldName = keyof FormValues;

export interface FieldText {
  label: string;
  hint?: string;
  placeholder?: string;
}

/** Each language by its own name, the same in every catalogue (a reader finds their own). */
const ENDONYMS: Record<(typeof LOCALES)[number], string> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  ar: 'العربية',
};

const built = new WeakMap<Translator, ReturnType<typeof build>>();

/** The settings window's words in `t`'s language (built once per language). */
export function settingsWords(t: Translator) {
  let words = built.get(t);
  if (!words) {
    words = build(t);
    built.set(t, words);
  }
  return words;
}

function build(t: Translator) {
  /** In page order. Onboarding shows only the first two. */
  const SECTIONS: readonly SectionText[] = (
    ['connection', 'phone', 'popup', 'crm', 'notifications', 'language', 'advanced'] as const
  ).map((id) => ({
    id,
    title: t.t(`settings.section.${id}.title`),
    summary: t.t(`settings.section.${id}.summary`),
  }));

  const FIELDS: Record<FieldName, FieldText> = {
    phoneSystem: { label: t.t('settings.field.phoneSystem.label') },
    baseUrl: {
      label: t.t('settings.field.baseUrl.label'),
      hint: t.t('settings.field.baseUrl.hint'),
      placeholder: 'https://acme.example.com',
    },
    apiKey: { label: t.t('settings.field.apiKey.label'), hint: t.t('settings.field.apiKey.hint') },
    secret: { label: t.t('settings.field.secret.label'), hint: t.t('settings.field.secret.hint') },
    extensions: {
      label: t.t('settings.field.extensions.label'),
      hint: t.t('settings.field.extensions.hint'),
    },
    dids: { label: t.t('settings.field.dids.label'), hint: t.t('settings.field.dids.hint') },
    defaultRegion: {
      label: t.t('settings.field.defaultRegion.label'),
      hint: t.t('settings.field.defaultRegion.hint'),
    },
    eventSource: { label: t.t('settings.field.eventSource.label') },
    connectionMode: { label: t.t('settings.field.connectionMode.label') },
    relayUrl: {
      label: t.t('settings.field.relayUrl.label'),
      hint: t.t('settings.field.relayUrl.hint'),
      placeholder: 'https://relay.example.com',
    },
    relayTenant: {
      label: t.t('settings.field.relayTenant.label'),
      hint: t.t('settings.field.relayTenant.hint'),
      placeholder: 'acme',
    },
    proxyMode: { label: t.t('settings.field.proxyMode.label') },
    proxyUrl: {
      label: t.t('settings.field.proxyUrl.label'),
      hint: t.t('settings.field.proxyUrl.hint'),
      placeholder: 'http://proxy.example.com:3128',
    },
    proxyAuth: {
      label: t.t('settings.field.proxyAuth.label'),
      hint: t.t('settings.field.proxyAuth.hint'),
    },
    crmUrlTemplate: {
      label: t.t('settings.field.crmUrlTemplate.label'),
      hint: t.t('settings.field.crmUrlTemplate.hint'),
      placeholder: 'https://crm.example.com/search?phone={from}',
    },
    autoOpenCrm: { label: t.t('settings.field.autoOpenCrm.label') },
    answerFromDeskPhone: { label: t.t('settings.field.answerFromDeskPhone.label') },
    deskPhoneAddress: {
      label: t.t('settings.field.deskPhoneAddress.label'),
      hint: t.t('settings.field.deskPhoneAddress.hint'),
      placeholder: '192.168.1.20',
    },
    contactsFile: {
      label: t.t('settings.field.contactsFile.label'),
      hint: t.t('settings.field.contactsFile.hint'),
    },
    crmProvider: {
      label: t.t('settings.field.crmProvider.label'),
      hint: t.t('settings.field.crmProvider.hint'),
    },
    crmUrl: {
      label: t.t('settings.field.crmUrl.label'),
      hint: t.t('settings.field.crmUrl.hint'),
      placeholder: 'https://crm.example.com/api/callers?phone={number}',
    },
    crmAuth: { label: t.t('settings.field.crmAuth.label') },
    crmNameField: { label: t.t('settings.field.crmNameField.label'), placeholder: 'name' },
    crmCompanyField: { label: t.t('settings.field.crmCompanyField.label'), placeholder: 'company' },
    crmRecordField: { label: t.t('settings.field.crmRecordField.label'), placeholder: 'url' },
    crmTimeoutSec: {
      label: t.t('settings.field.crmTimeoutSec.label'),
      hint: t.t('settings.field.crmTimeoutSec.hint', { ...CRM_TIMEOUT_SEC }),
    },
    crmSecret: {
      label: t.t('settings.field.crmSecret.label'),
      hint: t.t('settings.field.crmSecret.hint'),
    },
    crmLogUrl: {
      label: t.t('settings.field.crmLogUrl.label'),
      hint: t.t('settings.field.crmLogUrl.hint'),
      placeholder: 'https://crm.example.com/screenpop/calls',
    },
    crmLogSecret: {
      label: t.t('settings.field.crmLogSecret.label'),
      hint: t.t('settings.field.crmLogSecret.hint'),
    },
    doNotDisturb: {
      label: t.t('settings.field.doNotDisturb.label'),
      hint: t.t('settings.field.doNotDisturb.hint'),
    },
    sound: { label: t.t('settings.field.sound.label') },
    startAtLogin: { label: t.t('settings.field.startAtLogin.label') },
    popupDisplay: { label: t.t('settings.field.popupDisplay.label') },
    popupCorner: { label: t.t('settings.field.popupCorner.label') },
    popupLingerSec: { label: t.t('settings.field.popupLingerSec.label') },
    callLogCalls: {
      label: t.t('settings.field.callLogCalls.label'),
      hint: t.t('settings.field.callLogCalls.hint'),
    },
    callNoteSec: { label: t.t('settings.field.callNoteSec.label') },
    callLogChoices: {
      label: t.t('settings.field.callLogChoices.label'),
      hint: t.t('settings.field.callLogChoices.hint'),
    },
    featureVoicemail: {
      label: t.t('settings.field.featureVoicemail.label'),
      hint: t.t('settings.field.featureVoicemail.hint'),
    },
    featureSms: {
      label: t.t('settings.field.featureSms.label'),
      hint: t.t('settings.field.featureSms.hint'),
    },
    featureTrunk: {
      label: t.t('settings.field.featureTrunk.label'),
      hint: t.t('settings.field.featureTrunk.hint'),
    },
    featurePresence: {
      label: t.t('settings.field.featurePresence.label'),
      hint: t.t('settings.field.featurePresence.hint'),
    },
    language: {
      label: t.t('settings.field.language.label'),
      hint: t.t('settings.field.language.hint'),
    },
  };

  /** A field's words in a phone system's own terms, where they differ from the standard ones. */
  const SYSTEM_FIELDS: Partial<Record<PhoneSystem, Partial<Record<FieldName, FieldText>>>> = {
    'yeastar-p-series': {
      baseUrl: { ...FIELDS.baseUrl, hint: t.t('settings.field.baseUrl.yeastar-hint') },
      apiKey: {
        label: t.t('settings.field.apiKey.yeastar-label'),
        hint: t.t('settings.field.apiKey.yeastar-hint'),
      },
      secret: { ...FIELDS.secret, label: t.t('settings.field.secret.yeastar-label') },
    },
  };

  return {
    SECTIONS,
    FIELDS,
    /** `name`'s words for the phone system chosen in the form. */
    fieldWords: (name: FieldName, system: PhoneSystem): FieldText =>
      SYSTEM_FIELDS[system]?.[name] ?? FIELDS[name],
    /** The phone systems Screenpop speaks, with what each needs. */
    PHONE_SYSTEM_CHOICES: PHONE_SYSTEMS.map((value) => ({
      value,
      label: t.t(`settings.phone-system.${value}.label`),
      hint: t.t(`settings.phone-system.${value}.hint`),
    })),
    /** Under a feature the phone system has no event for. */
    NOT_OFFERED: t.t('settings.feature-not-offered'),
    /** The words of the secret field when the keychain already holds one. */
    SECRET_STORED: {
      placeholder: t.t('settings.secret-stored.placeholder'),
      hint: t.t('settings.secret-stored.hint'),
    },
    /** Beside a setting the organisation's policy locked. */
    lockedByText: (by: string) => t.t('settings.locked-by', { by }),
    /** The banner at the top of a managed computer's settings. */
    managedBanner: (by: string, count: number) => t.t('settings.managed-banner', { by, count }),
    /** Errors the form finds before asking main. */
    FORM_ERRORS: {
      popupLingerSec: t.t('settings.error.linger'),
      saveFailed: t.t('settings.error.save-failed'),
    },
    /** How this computer gets its calls: the API key, or signed in to the organisation. */
    MODE_CHOICES: (['api-key', 'organisation'] as const).map((value) => ({
      value,
      label: t.t(`settings.mode.${value}.label`),
      hint: t.t(`settings.mode.${value}.hint`),
    })),
    /** The event source choices, with what each means. */
    SOURCE_CHOICES: (['auto', 'direct', 'relay'] as const).map((value) => ({
      value,
      label: t.t(`settings.source.${value}.label`),
      hint: t.t(`settings.source.${value}.hint`),
    })),
    CORNERS: (['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const).map((value) => ({
      value,
      label: t.t(`settings.corner.${value}`),
    })),
    CALL_LOG_CALLS: CALL_LOG_CALLS.map((value) => ({
      value,
      label: t.t(`settings.call-log.${value}`),
    })),
    CRM_PROVIDERS: (['none', 'hubspot', 'generic'] as const).map((value) => ({
      value,
      label: t.t(`settings.crm-provider.${value}`),
    })),
    CRM_AUTHS: (['bearer', 'basic', 'none'] as const).map((value) => ({
      value,
      label: t.t(`settings.crm-auth.${value}`),
    })),
    /** The token field's label and help for HubSpot (a service key, or an existing private app's token). */
    CRM_SECRET_HUBSPOT: {
      label: t.t('settings.field.crmSecret.label-hubspot'),
      hint: t.t('settings.field.crmSecret.hint-hubspot'),
    },
    PROXY_MODES: (['system', 'none', 'manual'] as const).map((value) => ({
      value,
      label: t.t(`settings.proxy.${value}`),
    })),
    // The transport's modes (src-shared/net/proxy-auth.ts PROXY_AUTH_MODES, which the renderer
    // cannot load: it brings NTLM's Node crypto); `satisfies` refuses a name the transport lacks.
    PROXY_AUTH_MODES: (
      ['automatic', 'basic', 'none'] as const satisfies readonly ProxyAuthMode[]
    ).map((value) => ({
      value,
      label: t.t(`settings.proxy-auth.${value}`),
    })),
    DISPLAYS: (['primary', 'pointer'] as const).map((value) => ({
      value,
      label: t.t(`settings.display.${value}`),
    })),
    /** "Same as the system", then each language in its own name (with its lang for readers). */
    LANGUAGES: [
      { value: 'system' as LanguageSetting, label: t.t('common.language.system') },
      ...LOCALES.map((value) => ({
        value: value as LanguageSetting,
        label: ENDONYMS[value],
        lang: value,
      })),
    ],
  };
}
