/**
 * The languages Screenpop ships, and how a preference (the Settings choice, the OS's preferred
 * languages, a runner's LANG) becomes one of them. Pure functions, no imports of Node or the DOM:
 * the main process, the runner and the renderer all use them.
 */

/** The shipped languages (BCP 47 language subtags), in the order Settings offers them. */
export const LOCALES = ['en', 'de', 'fr', 'es', 'ar'] as const;
export type ShippedLocale = (typeof LOCALES)[number];

/**
 * The pseudo-locale: English with accented letters, 40 % longer, in brackets. Used by tests (and
 * by developers, `SCREENPOP_LANG=en-XA`) to find text that is clipped or not in the catalogue; never
 * offered to users.
 */
export const PSEUDO_LOCALE = 'en-XA';
export type Locale = ShippedLocale | typeof PSEUDO_LOCALE;

export const DEFAULT_LOCALE: ShippedLocale = 'en';

/** Right-to-left languages among the shipped ones. */
const RTL = new Set<string>(['ar']);

export function isLocale(value: unknown): value is Locale {
  return value === PSEUDO_LOCALE || (LOCALES as readonly unknown[]).includes(value);
}

export function directionOf(locale: Locale): 'ltr' | 'rtl' {
  return RTL.has(locale) ? 'rtl' : 'ltr';
}

/**
 * The locale to use for a list of preferences, best first ("de-AT", "fr_CA.UTF-8", "ar", ...):
 * the first whose language Screenpop ships, else English. The pseudo-locale is matched only
 * exactly. Malformed entries are skipped (the input is an environment or an OS list).
 */
export function resolveLocale(preferred: readonly (string | null | undefined)[]): Locale {
  for (const entry of preferred) {
    if (typeof entry !== 'string') continue;
    const tag = entry.trim().split('.')[0]?.replace(/_/g, '-') ?? '';
    if (tag.toLowerCase() === PSEUDO_LOCALE.toLowerCase()) return PSEUDO_LOCALE;
    const language = tag.split('-')[0]?.toLowerCase() ?? '';
    if ((LOCALES as readonly string[]).includes(language)) return language as ShippedLocale;
  }
  return DEFAULT_LOCALE;
}

/**
 * The locale for a Settings choice: a shipped language as chosen, 'system' (or anything unknown)
 * as the OS prefers.
 */
export function localeForSetting(choice: string, osPreferred: readonly string[]): Locale {
  return isLocale(choice) ? choice : resolveLocale(osPreferred);
}

/**
 * The OS's preferred languages as a process sees them on POSIX: LANGUAGE (a colon list), then
 * LC_ALL, LC_MESSAGES and LANG ("C" and "POSIX" mean no preference). The app asks Electron instead
 * (app.getPreferredSystemLanguages()); Windows and macOS runners fall back to Intl's default.
 */
export function environmentLanguages(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  for (const part of (env.LANGUAGE ?? '').split(':')) if (part) out.push(part);
  for (const name of ['LC_ALL', 'LC_MESSAGES', 'LANG']) {
    const value = env[name];
    if (value && value !== 'C' && value !== 'POSIX' && !value.startsWith('C.')) out.push(value);
  }
  // The runtime's default locale. Asked of Intl.PluralRules, not DateTimeFormat: both give V8's
  // one default locale, but a DateTimeFormat loads ~5 MB of ICU's data (calendars, time zones)
  // into the runner's memory, a PluralRules ~0.3 MB.
  out.push(new Intl.PluralRules().resolvedOptions().locale);
  return out;
}
