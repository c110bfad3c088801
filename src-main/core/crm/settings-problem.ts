/**
 * A CRM lookup that validate-settings.ts refused (the one place its rules live), said for the
 * Settings window: the part of the setting the problem is in, so Settings shows it next to that
 * field, in the window's own words for what the form offers. A problem the form has no words of its
 * own for (a provider or sign-in it does not offer) keeps the validator's, which are translated too.
 */
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';
import { phrase, type Words } from '../../../src-shared/i18n/phrase.ts';

/** The validator's problem (status.settings.*) -> the form's words for it (settings.error.*). */
const FORM_WORDS: Partial<Record<MessageId, MessageId>> = {
  'status.settings.whole-seconds': 'settings.error.crm-timeout',
  'status.settings.lookup-empty': 'settings.error.crm-url.empty',
  'status.settings.too-long': 'settings.error.crm-url.too-long',
  'status.settings.lookup-invalid': 'settings.error.crm-url.not-a-url',
  'status.settings.lookup-https': 'settings.error.crm-url.not-https',
  'status.settings.lookup-credentials': 'settings.error.crm-url.credentials',
  'status.settings.lookup-placeholder': 'settings.error.crm-url.unknown-placeholder',
  'status.settings.lookup-placeholder-query': 'settings.error.crm-url.placeholder-outside-query',
  'status.settings.lookup-no-placeholder': 'settings.error.crm-url.no-placeholder',
  'status.settings.lookup-field-path': 'settings.error.crm-field-path',
  'status.settings.lookup-name-needed': 'settings.error.crm-name-needed',
  // The call log's address (logUrl), the one part checked as an address (setting-checks.ts).
  'status.settings.address-insecure': 'settings.error.crm-log-url.insecure',
  'status.settings.address-text': 'settings.error.crm-log-url.not-a-url',
  'status.settings.address-invalid': 'settings.error.crm-log-url.not-a-url',
  'status.settings.address-query': 'settings.error.crm-log-url.query',
  'status.settings.log-url-credentials': 'settings.error.crm-log-url.credentials',
};

/**
 * The part and the form's words of a refused `crmLookup` (`refused`: the validator's words, a
 * `status.settings.inner` phrase naming the part), or null when the problem is the whole value.
 */
export function crmSettingsProblem(refused: Words): { part: string; words: Words } | null {
  const outer = refused.length === 1 ? refused[0] : undefined;
  if (outer?.id !== 'status.settings.inner') return null;
  const part = outer.values?.name;
  const inner = outer.values?.problem;
  if (typeof part !== 'string' || typeof inner !== 'object' || inner.length !== 1) return null;
  const problem = inner[0]!;
  const own = FORM_WORDS[problem.id];
  return { part, words: own ? [phrase(own, problem.values)] : inner };
}
