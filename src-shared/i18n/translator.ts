/**
 * A Translator: the words and formats of one locale, built on FormatJS (@formatjs/intl: ICU
 * MessageFormat with plural and select rules; numbers, dates, times and lengths of time through
 * Intl). The same code serves the main process, the headless runner and the renderer; each holds
 * the translator of the current language and swaps it when the language changes.
 *
 * Values put into a message are text from outside (a caller's name, a trunk, a host): a string
 * value is wrapped in Unicode's first-strong isolate (U+2068 ... U+2069) wherever its direction
 * could disturb the sentence: always in a right-to-left language (a Latin name or a number in an
 * Arabic sentence), and in a left-to-right one when the value holds right-to-left letters or bidi
 * controls (an Arabic name in an English sentence). So a value keeps its own direction and cannot
 * reorder the words around it. The pseudo-locale isolates every value, which is how its tests tell
 * values from words. Plain-text outputs read by programs (the runner's lines) turn it off.
 *
 * Most messages are words and plain values (`{host}`, a `select` on a key): t() writes those from
 * the parsed message itself, exactly as FormatJS would (test/i18n/translator.test.ts compares
 * every message of every catalogue). Only a plural, a number, a date or a time needs Intl, and the
 * FormatJS object is made on the first such message or format call: making it asks Intl which
 * locales it supports, which maps ~5 MB of ICU's locale data into the process and took 17-272 ms
 * of the headless runner's start (a CPU profile, issue 24), for messages that need none of it.
 */
import { createIntl, createIntlCache, type IntlShape } from '@formatjs/intl';
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { ENGLISH_CATALOGUE, flatMessages, type MessageId } from './catalogue.ts';
import { translationOf } from './translations.ts';
import { directionOf, PSEUDO_LOCALE, type Locale } from './locales.ts';
import { accent, pseudoMessage } from './pseudo.ts';

export type { MessageId } from './catalogue.ts';
export type MessageValues = Readonly<Record<string, string | number>>;

export interface Translator {
  readonly locale: Locale;
  /** The tag given to Intl (the pseudo-locale formats as English). */
  readonly intlLocale: string;
  readonly dir: 'ltr' | 'rtl';
  /** A message with its values; string values are bidi-isolated unless the translator is plain. */
  t(id: MessageId, values?: MessageValues): string;
  number(value: number, options?: Intl.NumberFormatOptions): string;
  /** A date and/or time; `options` as Intl.DateTimeFormat's (default: medium date, short time). */
  dateTime(ms: number, options?: Intl.DateTimeFormatOptions): string;
  /** A time of day ("14:05", "2:05 PM"). */
  time(ms: number): string;
  /**
   * A length of time, never like a clock time: "1 min, 5 sec" ('short', shown) or "1 minute,
   * 5 seconds" ('long', for screen readers). From an hour on, seconds are left out. Negative spans
   * (a wall clock that stepped back) read as 0 seconds.
   */
  duration(ms: number, style?: 'short' | 'long'): string;
  /** "5 minutes ago", "yesterday": `ms` relative to `now`. */
  relative(ms: number, now: number): string;
  /** "a, b and c" in the locale's words; 'unit' lists parts of one figure: "6 calls, 2 missed". */
  list(items: readonly string[], type?: 'conjunction' | 'unit'): string;
}

export interface TranslatorOptions {
  /** false: leave string values as they are (no U+2068/U+2069), for plain-text outputs. */
  isolate?: boolean;
  /** Told about a message the locale lacks (English is shown instead); tests fail on it. */
  onMissing?: (id: string, locale: Locale) => void;
  /** The time zone for dates and times (tests); default the system's. */
  timeZone?: string;
}

const FSI = '\u2068';
const PDI = '\u2069';
/** Right-to-left letters (Hebrew, Arabic, Syriac, Thaana, NKo, ... and their presentation forms) or RTL controls. */
const RTL_TEXT =
  /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\u200f\u202b\u202e\u2067]|\ud802[\udc00-\udfff]|\ud83a/;

/** Messages as @formatjs/intl takes them: text, or already parsed (the pseudo-locale's). */
type Messages = Record<string, string> | Record<string, MessageFormatElement[]>;

const ENGLISH = flatMessages(ENGLISH_CATALOGUE);
const messageCache = new Map<Locale, Messages>();

/**
 * A message written from its elements without Intl: words, plain arguments and selects on them
 * (IntlMessageFormat turns such a value into String(value) and picks the select's option or
 * `other`). Undefined when the message needs Intl (plural, number, date, time, a tag) or lacks a
 * value: FormatJS then formats it (and reports what is wrong) as before.
 */
function plainText(
  elements: readonly MessageFormatElement[],
  values: Readonly<Record<string, string | number>>,
): string | undefined {
  let out = '';
  for (const el of elements) {
    if (el.type === TYPE.literal) out += el.value;
    else if (el.type === TYPE.argument || el.type === TYPE.select) {
      if (!Object.hasOwn(values, el.value)) return undefined;
      const value = String(values[el.value]);
      if (el.type === TYPE.argument) out += value;
      else {
        const option = el.options[value] ?? el.options.other;
        const text = option && plainText(option.value, values);
        if (text === undefined) return undefined;
        out += text;
      }
    } else return undefined;
  }
  return out;
}

function messagesFor(locale: Locale): Messages {
  const cached = messageCache.get(locale);
  if (cached) return cached;
  let messages: Messages;
  if (locale === PSEUDO_LOCALE) {
    const parsed: Record<string, MessageFormatElement[]> = {};
    for (const [id, text] of ENGLISH) parsed[id] = pseudoMessage(text);
    messages = parsed;
  } else {
    messages = Object.fromEntries(locale === 'en' ? ENGLISH : translationOf(locale));
  }
  messageCache.set(locale, messages);
  return messages;
}

/** Names of the select arguments of a message: their values are keys, never isolated. */
function selectArguments(message: string | MessageFormatElement[] | undefined): Set<string> {
  const names = new Set<string>();
  const walk = (elements: MessageFormatElement[]): void => {
    for (const el of elements) {
      if (el.type === TYPE.select) names.add(el.value);
      if (el.type === TYPE.select || el.type === TYPE.plural)
        for (const option of Object.values(el.options)) walk(option.value);
      if (el.type === TYPE.tag) walk(el.children);
    }
  };
  if (message !== undefined)
    walk(typeof message === 'string' ? parse(message, { ignoreTag: true }) : message);
  return names;
}

interface DurationFormatLike {
  format(duration: Record<string, number>): string;
}
type DurationFormatConstructor = new (
  locale: string,
  options: { style: 'short' | 'long'; secondsDisplay?: 'always' },
) => DurationFormatLike;

const UNITS = ['hours', 'minutes', 'seconds'] as const;
const UNIT_NAMES = { hours: 'hour', minutes: 'minute', seconds: 'second' } as const;

function durationParts(ms: number): Record<string, number> {
  const total = Number.isFinite(ms) ? Math.max(0, Math.floor(ms / 1000)) : 0;
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const parts: Record<string, number> = {};
  if (hours > 0) parts.hours = hours;
  if (minutes > 0) parts.minutes = minutes;
  if (hours === 0 && (seconds > 0 || minutes === 0)) parts.seconds = seconds;
  return parts;
}

export function createTranslator(locale: Locale, options: TranslatorOptions = {}): Translator {
  const pseudo = locale === PSEUDO_LOCALE;
  const intlLocale = pseudo ? 'en' : locale;
  const isolate = options.isolate ?? true;
  const isolateAll = pseudo || directionOf(locale) === 'rtl';
  const onMissing = options.onMissing;
  const messages = messagesFor(locale);
  let made: IntlShape<string> | undefined;
  /** FormatJS, made on first need (a plural, a number, a date...): see the top of this file. */
  const intl = (): IntlShape<string> =>
    (made ??= createIntl(
      {
        locale: intlLocale,
        defaultLocale: 'en',
        messages,
        ...(options.timeZone ? { timeZone: options.timeZone } : {}),
        onError: (error) => {
          if (error.code === 'MISSING_TRANSLATION') return; // reported by t() with the id
          onMissing?.(String(error.message), locale);
        },
      },
      createIntlCache(),
    ));
  /** Each message's elements, parsed on its first use (the pseudo-locale's come parsed). */
  const parsed = new Map<string, MessageFormatElement[]>();
  const elementsOf = (id: string): MessageFormatElement[] | undefined => {
    let elements = parsed.get(id);
    if (!elements) {
      const message = messages[id];
      if (message === undefined || message === '') return undefined;
      elements = typeof message === 'string' ? parse(message, { ignoreTag: true }) : message;
      parsed.set(id, elements);
    }
    return elements;
  };
  // Formatted dates and numbers carry letters too ("PM", "min"): accented in the pseudo-locale,
  // so every ASCII letter left on a pseudo screen is a word that skipped the catalogue.
  const shown = pseudo ? accent : (text: string) => text;
  const selects = new Map<string, Set<string>>();
  const selectsOf = (id: string): Set<string> => {
    let names = selects.get(id);
    if (!names) {
      names = selectArguments(elementsOf(id) ?? ENGLISH.get(id));
      selects.set(id, names);
    }
    return names;
  };
  const DurationFormat = (Intl as unknown as { DurationFormat?: DurationFormatConstructor })
    .DurationFormat;

  return {
    locale,
    intlLocale,
    dir: directionOf(locale),
    t(id, values) {
      const has = Object.hasOwn(messages, id);
      if (!has) onMissing?.(id, locale);
      const args: Record<string, string | number> = {};
      if (values) {
        for (const [key, value] of Object.entries(values)) {
          const wrap =
            typeof value === 'string' &&
            isolate &&
            (isolateAll || RTL_TEXT.test(value)) &&
            !selectsOf(id).has(key);
          args[key] = wrap ? `${FSI}${value}${PDI}` : value;
        }
      }
      const elements = has ? elementsOf(id) : undefined;
      const plain = elements && plainText(elements, args);
      if (plain !== undefined) return plain;
      // Screenpop's messages have no markup tags: "<file>" in a help text is just words.
      return intl().formatMessage({ id, defaultMessage: ENGLISH.get(id) ?? id }, args, {
        ignoreTag: true,
      });
    },
    number: (value, opts) =>
      shown(intl().formatNumber(value, opts as Parameters<IntlShape['formatNumber']>[1])),
    dateTime: (ms, opts) =>
      shown(intl().formatDate(ms, opts ?? { dateStyle: 'medium', timeStyle: 'short' })),
    time: (ms) => shown(intl().formatTime(ms, { hour: 'numeric', minute: '2-digit' })),
    duration(ms, style = 'short') {
      const parts = durationParts(ms);
      if (DurationFormat) {
        // 'always' so that zero reads "0 sec" rather than nothing.
        const zero = Object.keys(parts).length === 1 && parts.seconds === 0;
        const format = new DurationFormat(intlLocale, {
          style,
          ...(zero ? { secondsDisplay: 'always' as const } : {}),
        });
        return shown(format.format(parts));
      }
      // Without Intl.DurationFormat (older engines): each unit by Intl.NumberFormat, as a list.
      const words = UNITS.filter((u) => parts[u] !== undefined).map((u) =>
        intl().formatNumber(parts[u]!, {
          style: 'unit',
          unit: UNIT_NAMES[u],
          unitDisplay: style === 'long' ? 'long' : 'short',
        }),
      );
      return shown(intl().formatList(words, { type: 'unit', style: 'narrow' }));
    },
    relative(ms, now) {
      const seconds = Math.round((ms - now) / 1000);
      const abs = Math.abs(seconds);
      const [value, unit]: [number, Intl.RelativeTimeFormatUnit] =
        abs < 60
          ? [seconds, 'second']
          : abs < 3600
            ? [Math.round(seconds / 60), 'minute']
            : abs < 86_400
              ? [Math.round(seconds / 3600), 'hour']
              : [Math.round(seconds / 86_400), 'day'];
      return shown(intl().formatRelativeTime(value, unit, { numeric: 'auto' }));
    },
    list: (items, type = 'conjunction') =>
      shown(intl().formatList(items, { type, style: type === 'unit' ? 'short' : 'long' })),
  };
}
