/**
 * The renderer's side of localization: main decides the language (Settings, policy or the OS) and
 * tells each window (`getLocale`, `onLocale`); this provider holds the matching Translator
 * (src-shared/i18n/translator.ts, the same one main uses), sets `lang` and `dir` on the page so
 * the layout mirrors for right-to-left languages, and re-renders the page when the language
 * changes. Components read it with `useT()`. Nothing is shown until the language is known, so a
 * window never flashes English first.
 */
import type { ReactNode } from 'react';
import { createContext, Fragment, useContext, useEffect, useState } from 'react';
import type { LocaleView, ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { isLocale, PSEUDO_LOCALE, type Locale } from '../../src-shared/i18n/locales.ts';
import { createTranslator, type Translator } from '../../src-shared/i18n/translator.ts';
import { useLiveValue } from './live.ts';

const translators = new Map<Locale, Translator>();

/** One translator per language for the page's life (building one parses its catalogue). */
export function translatorFor(locale: Locale): Translator {
  let translator = translators.get(locale);
  if (!translator) {
    translator = createTranslator(locale, {
      onMissing: (id) => console.warn(`no ${locale} words for ${id}`),
    });
    translators.set(locale, translator);
  }
  return translator;
}

const TranslatorContext = createContext<Translator>(translatorFor('en'));

/** The translator of the window's language. */
export function useT(): Translator {
  return useContext(TranslatorContext);
}

/** The window's title, in its language (the static <title> is English until this runs). */
export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = title;
  }, [title]);
}

/** Sets the page's language and direction (the pseudo-locale is English to the browser). */
function applyToDocument(translator: Translator): void {
  const root = document.documentElement;
  root.lang = translator.locale === PSEUDO_LOCALE ? 'en' : translator.locale;
  root.dir = translator.dir;
}

export function I18nProvider({ api, children }: { api: ScreenpopApi; children: ReactNode }) {
  const [translator, setTranslator] = useState<Translator | null>(null);
  const apply = (view: LocaleView): void => {
    const next = translatorFor(isLocale(view?.locale) ? view.locale : 'en');
    applyToDocument(next);
    setTranslator(next);
  };
  useLiveValue(api.onLocale, api.getLocale, {
    push: apply,
    failed: () => apply({ locale: 'en' }),
  });
  if (!translator) return null;
  return <TranslatorContext.Provider value={translator}>{children}</TranslatorContext.Provider>;
}

const SLOT_START = '\ue000';
const SLOT_END = '\ue001';

/**
 * A translated sentence with elements inside it (a caller's name as InertText, an address as
 * <code>): the message is formatted with `WithValues.slot(name)` for each such value, and the
 * slots are replaced by the elements, so the words stay in the order the language wants and the
 * elements stay elements (never markup built from text).
 */
export function WithValues({ text, values }: { text: string; values: Record<string, ReactNode> }) {
  const parts = text.split(new RegExp(`${SLOT_START}([\\w-]+)${SLOT_END}`));
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <Fragment key={i}>{values[part] ?? null}</Fragment>
        ) : (
          <Fragment key={i}>{part}</Fragment>
        ),
      )}
    </>
  );
}

/** The placeholder for an element in a message (private-use characters around its name). */
WithValues.slot = (name: string): string => `${SLOT_START}${name}${SLOT_END}`;
