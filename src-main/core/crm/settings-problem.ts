/**
 * What is wrong with a CRM lookup the user set up in Settings, in words for the user (the part
 * of the setting it is in, so Settings shows it next to that field). The rules are the ones
 * validate-settings.ts applies (template.ts's, CRM_TIMEOUT_SEC): validate-settings keeps the
 * English sentence for the settings file, the policy and the runner; this says the same problem in
 * the language of Settings.
 */
import { phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';
import { CRM_TIMEOUT_SEC, DEFAULT_SETTINGS, type CrmLookupSettings } from '../settings/types.ts';
import { fieldMappingOk, lookupTemplateProblem, type TemplateProblem } from './template.ts';

export type CrmSettingsPart = keyof CrmLookupSettings;

const TEMPLATE_WORDS: Record<TemplateProblem, MessageId> = {
  empty: 'settings.error.crm-url.empty',
  'too-long': 'settings.error.crm-url.too-long',
  'not-a-url': 'settings.error.crm-url.not-a-url',
  'not-https': 'settings.error.crm-url.not-https',
  credentials: 'settings.error.crm-url.credentials',
  'unknown-placeholder': 'settings.error.crm-url.unknown-placeholder',
  'placeholder-outside-query': 'settings.error.crm-url.placeholder-outside-query',
  'no-placeholder': 'settings.error.crm-url.no-placeholder',
};

/**
 * The first problem of a CRM lookup setting (missing parts take their default), or null: also
 * for a value that is not one the form makes (not an object, a part that is not text), which
 * validate-settings describes.
 */
export function crmSettingsProblem(value: unknown): { part: CrmSettingsPart; words: Words } | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const s = { ...DEFAULT_SETTINGS.crmLookup, ...(value as Partial<CrmLookupSettings>) };
  const texts = [s.urlTemplate, s.nameField, s.companyField, s.recordUrlField];
  if (texts.some((t) => typeof t !== 'string')) return null;
  const timeout = s.timeoutSec;
  if (!Number.isInteger(timeout) || timeout < CRM_TIMEOUT_SEC.min || timeout > CRM_TIMEOUT_SEC.max)
    return {
      part: 'timeoutSec',
      words: [phrase('settings.error.crm-timeout', { ...CRM_TIMEOUT_SEC })],
    };
  if (s.provider === 'generic' || s.urlTemplate.trim() !== '') {
    const problem = lookupTemplateProblem(s.urlTemplate);
    if (problem) return { part: 'urlTemplate', words: [phrase(TEMPLATE_WORDS[problem])] };
  }
  for (const part of ['nameField', 'companyField', 'recordUrlField'] as const)
    if (!fieldMappingOk(s[part])) return { part, words: [phrase('settings.error.crm-field-path')] };
  if (s.provider === 'generic' && s.nameField.trim() === '')
    return { part: 'nameField', words: [phrase('settings.error.crm-name-needed')] };
  return null;
}
