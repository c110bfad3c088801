/**
 * The language in force in one process, and who is told when it changes: the main process holds
 * one (Settings choice or the OS's languages), the runner one (--lang, LANG). Services that show
 * words take it in their constructor and ask `current()` each time they speak, so a change of
 * language applies to the next word without rebuilding anything.
 */
import { Emitter } from '../kit/emitter.ts';
import type { Logger } from '../process/log.ts';
import type { Locale } from './locales.ts';
import { createTranslator, type Translator, type TranslatorOptions } from './translator.ts';

/** What a service needs to speak: the translator of the language in force now. */
export interface TranslatorSource {
  current(): Translator;
}

export class LocaleState implements TranslatorSource {
  private translator: Translator;
  private readonly changed: Emitter<[Translator]>;
  private readonly options: TranslatorOptions;

  constructor(locale: Locale, logger: Logger, options: TranslatorOptions = {}) {
    this.options = options;
    this.translator = createTranslator(locale, options);
    this.changed = new Emitter(logger, 'language');
  }

  current(): Translator {
    return this.translator;
  }

  get locale(): Locale {
    return this.translator.locale;
  }

  /** Switches language; listeners hear only a real change. */
  set(locale: Locale): void {
    if (locale === this.translator.locale) return;
    this.translator = createTranslator(locale, this.options);
    this.changed.emit(this.translator);
  }

  onChange(listener: (translator: Translator) => void): () => void {
    return this.changed.on(listener);
  }
}

/**
 * English without isolation marks: what a service speaks when it is given no language (tests, the
 * runner's JSON, logs). One shared instance: building a translator parses its catalogue.
 */
export const PLAIN_ENGLISH: TranslatorSource = fixedTranslator('en', { isolate: false });

/** A fixed translator as a source (tests, one-shot commands). */
export function fixedTranslator(locale: Locale, options: TranslatorOptions = {}): TranslatorSource {
  const translator = createTranslator(locale, options);
  return { current: () => translator };
}
