/**
 * The messages of one shipped language other than English, flat (`namespace.key` -> text), as the
 * translator reads them. From the sources (the app, the renderer, the tests) every catalogue is
 * imported with the code. The headless runner's bundle replaces this module
 * (scripts/build-headless.ts): each language is a file beside the bundle,
 * dist-headless/catalogues/<locale>.json, read the first time that language is asked for, so a
 * runner holds English and its own language only (all five in the bundle held ~4 MB more).
 */
import { CATALOGUES, flatMessages } from './catalogue.ts';
import type { ShippedLocale } from './locales.ts';

export type TranslatedLocale = Exclude<ShippedLocale, 'en'>;

export function translationOf(locale: TranslatedLocale): Map<string, string> {
  return flatMessages(CATALOGUES[locale]);
}
