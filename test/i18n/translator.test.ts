/** The translator through its public surface: words per language, formats, isolation, pseudo. */
import { createIntl } from '@formatjs/intl';
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it, vi } from 'vitest';
import { createTranslator, type MessageId } from '../../src-shared/i18n/translator.ts';
import { CATALOGUES, flatMessages } from '../../src-shared/i18n/catalogue.ts';
import { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import {
  environmentLanguages,
  localeForSetting,
  resolveLocale,
} from '../../src-shared/i18n/locales.ts';
import { createLogger } from '../../src-shared/process/log.ts';

const at = Date.UTC(2026, 10, 23, 14, 5);

describe('locales', () => {
  it('picks the first preferred language Screenpop ships, else English', () => {
    expect(resolveLocale(['pt-BR', 'de-AT', 'fr'])).toBe('de');
    expect(resolveLocale(['fr_CA.UTF-8'])).toBe('fr');
    expect(resolveLocale(['AR-eg'])).toBe('ar');
    expect(resolveLocale(['ja', '', 'x'])).toBe('en');
    expect(resolveLocale([])).toBe('en');
    expect(resolveLocale(['en-XA'])).toBe('en-XA');
    expect(localeForSetting('es', ['de'])).toBe('es');
    expect(localeForSetting('system', ['de-CH'])).toBe('de');
  });

  it('reads LANGUAGE, LC_ALL, LC_MESSAGES and LANG in that order, skipping C and POSIX', () => {
    const list = environmentLanguages({ LANGUAGE: 'ar:fr', LC_ALL: 'C', LANG: 'de_DE.UTF-8' });
    expect(list.slice(0, 3)).toEqual(['ar', 'fr', 'de_DE.UTF-8']);
    expect(resolveLocale(environmentLanguages({ LANG: 'es_MX.UTF-8' }))).toBe('es');
  });
});

describe('translator', () => {
  it('speaks each language, with Arabic right to left', () => {
    const words = (['en', 'de', 'fr', 'es', 'ar'] as const).map((l) => {
      const t = createTranslator(l);
      return [l, t.dir, t.t('common.outcome.missed')];
    });
    expect(words).toEqual([
      ['en', 'ltr', 'Missed'],
      ['de', 'ltr', 'Verpasst'],
      ['fr', 'ltr', 'Manqué'],
      ['es', 'ltr', 'Perdida'],
      ['ar', 'rtl', 'فائتة'],
    ]);
  });

  it('isolates values whose direction could reorder the sentence', () => {
    const en = createTranslator('en');
    // A Latin value in an English sentence cannot disturb it; an Arabic one is isolated.
    expect(en.t('popup.announce', { caller: 'Ada' })).toBe('Incoming call from Ada');
    expect(en.t('popup.announce', { caller: 'محمد' })).toBe('Incoming call from \u2068محمد\u2069');
    // In Arabic every value is isolated: a Latin name or a number keeps left-to-right order.
    const ar = createTranslator('ar');
    expect(ar.t('common.extension', { number: '205' })).toBe('تحويلة \u2068205\u2069');
    const plain = createTranslator('ar', { isolate: false });
    expect(plain.t('common.extension', { number: '205' })).toBe('تحويلة 205');
  });

  it('never isolates a select key (it would match no case)', () => {
    const t = createTranslator('ar');
    expect(t.t('history.no-match', { filter: 'missed' })).toBe('لا توجد مكالمات فائتة.');
  });

  it('formats dates, times and lengths of time in the locale', () => {
    const en = createTranslator('en', { timeZone: 'UTC' });
    const de = createTranslator('de', { timeZone: 'UTC' });
    expect(en.time(at)).toBe('2:05 PM');
    expect(de.time(at)).toBe('14:05');
    expect(de.dateTime(at)).toBe('23.11.2026, 14:05');
    expect(en.duration(65_000)).toBe('1 min, 5 sec');
    expect(en.duration(65_000, 'long')).toBe('1 minute, 5 seconds');
    expect(en.duration(3_725_000)).toBe('1 hr, 2 min');
    expect(en.duration(-5_000)).toBe('0 sec');
    expect(de.duration(480_000, 'long')).toBe('8 Minuten');
    expect(en.relative(at - 300_000, at)).toBe('5 minutes ago');
  });

  it('the pseudo-locale accents every letter, keeps values, and is 40 % longer', () => {
    const t = createTranslator('en-XA', { isolate: false });
    const text = t.t('common.ring.after', { duration: 'X' });
    expect(text.startsWith('[') && text.endsWith(']')).toBe(true);
    expect(text).toContain('X');
    expect(text.replace('X', '')).not.toMatch(/[A-Za-z]/);
    const english = createTranslator('en').t('common.unknown-caller');
    expect(t.t('common.unknown-caller').length).toBeGreaterThanOrEqual(english.length * 1.4);
    expect(t.time(at)).not.toMatch(/[A-Za-z]/);
  });

  it('a missing message falls back to English and is reported', () => {
    const missing: string[] = [];
    const t = createTranslator('de', { onMissing: (id) => missing.push(id) });
    expect(t.t('no.such-key' as never)).toBe('no.such-key');
    expect(missing).toEqual(['no.such-key']);
  });
});

describe('LocaleState', () => {
  it('switches language and tells listeners only of a real change', () => {
    const state = new LocaleState('en', createLogger({ level: 'error', sink: () => {} }));
    const heard: string[] = [];
    state.onChange((t) => heard.push(t.locale));
    state.set('en');
    state.set('ar');
    state.set('ar');
    expect(heard).toEqual(['ar']);
    expect(state.current().t('common.outcome.answered')).toBe('تم الرد');
  });
});

/** Every argument of a message, and for each select its option keys (plus one it lacks). */
function argumentsOf(elements: MessageFormatElement[], into = new Map<string, string[]>()) {
  for (const el of elements) {
    if (el.type === TYPE.argument && !into.has(el.value)) into.set(el.value, ['v']);
    if (el.type === TYPE.select) into.set(el.value, [...Object.keys(el.options), 'not-a-key']);
    if (el.type === TYPE.plural || el.type === TYPE.number) into.set(el.value, ['2']);
    if (el.type === TYPE.select || el.type === TYPE.plural)
      for (const option of Object.values(el.options)) argumentsOf(option.value, into);
  }
  return into;
}

describe('translator: words without Intl', () => {
  it('writes every message of every catalogue as FormatJS does, for each select option', () => {
    let compared = 0;
    for (const locale of ['en', 'de', 'fr', 'es', 'ar'] as const) {
      const t = createTranslator(locale, { isolate: false, timeZone: 'UTC' });
      const messages = flatMessages(CATALOGUES[locale]);
      const intl = createIntl({
        locale,
        defaultLocale: 'en',
        messages: Object.fromEntries(messages),
        timeZone: 'UTC',
      });
      for (const [id, text] of messages) {
        const args = argumentsOf(parse(text, { ignoreTag: true }));
        const first = Object.fromEntries([...args].map(([name, keys]) => [name, keys[0]!]));
        const cases = [first];
        for (const [name, keys] of args)
          for (const key of keys.slice(1)) cases.push({ ...first, [name]: key });
        for (const values of cases) {
          const expected = intl.formatMessage({ id }, values, { ignoreTag: true });
          expect([locale, id, t.t(id as MessageId, values)]).toEqual([locale, id, expected]);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(3000);
  });

  it('asks Intl nothing for words and plain values; a plural or a number makes FormatJS then', () => {
    const supported = vi.spyOn(Intl.NumberFormat, 'supportedLocalesOf');
    try {
      const t = createTranslator('de');
      expect(t.t('common.outcome.missed')).toBe('Verpasst');
      expect(t.t('runner.diagnostics-written', { path: '/tmp/d.zip', result: 'passed' })).toContain(
        '/tmp/d.zip',
      );
      expect(supported).not.toHaveBeenCalled();
      expect(t.number(1234.5)).toBe('1.234,5');
      expect(supported).toHaveBeenCalled();
    } finally {
      supported.mockRestore();
    }
  });
});
