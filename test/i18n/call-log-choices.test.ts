/**
 * The Settings call-log choice (issue 39 item 5) in every catalogue language: each choice says
 * what happens to the calls the user makes too (docs/crm/hubspot.md "Logging calls": `answered`
 * logs outbound calls the other side answered, `answered-and-missed` also the unanswered and busy
 * ones), through the words the Settings form shows (settingsWords).
 */
import { describe, expect, it } from 'vitest';
import { settingsWords } from '../../src-renderer/settings/fields.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import type { Locale } from '../../src-shared/i18n/locales.ts';

/** The words, per language, that name the calls the user made (outbound). */
const MADE: Record<string, RegExp> = {
  en: /calls? I made/,
  de: /ausgehenden Anrufe/,
  es: /hice/,
  fr: /passés/,
  ar: /أجريتُها/,
};
/** The words for "busy", which only the answered-and-missed choice says (an unanswered call). */
const BUSY: Record<string, RegExp> = {
  en: /busy/,
  de: /besetzt/,
  es: /ocupadas/,
  fr: /occupés/,
  ar: /مشغول/,
};

const labels = (locale: string) => {
  const choices = settingsWords(createTranslator(locale as Locale)).CALL_LOG_CALLS;
  return Object.fromEntries(choices.map((c) => [c.value, c.label]));
};

describe('the call-log choice in Settings', () => {
  it('says in English what is logged of the calls I make', () => {
    expect(labels('en')).toEqual({
      answered: 'Calls I answered, and calls I made that were answered',
      'answered-and-missed':
        'Calls I answered or missed, and every call I made (answered, unanswered or busy)',
      none: 'None',
    });
  });

  for (const locale of Object.keys(MADE))
    it(`names the calls I make in both choices, and busy ones only in the wider one (${locale})`, () => {
      const l = labels(locale);
      expect(l.answered).toMatch(MADE[locale]!);
      expect(l['answered-and-missed']).toMatch(MADE[locale]!);
      expect(l['answered-and-missed']).toMatch(BUSY[locale]!);
      expect(l.answered).not.toMatch(BUSY[locale]!);
    });
});
