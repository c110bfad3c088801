/** The translator through its public surface: words per language, formats, isolation, pseudo. */
import { describe, expect, it } from 'vitest';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import {
  environmentLanguages,
  localeForSetting,
  resolveLocale,
} from '../../src-shared/i18n/locales.ts';
import { createLogger } from '../../src-shared/log.ts';

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
