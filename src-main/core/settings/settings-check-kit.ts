/**
 * The small schema kit the settings checks are written with: a check reads an untrusted value
 * and gives the value or a problem (a catalogue phrase of `status.settings.*`); list checks drop
 * bad entries one by one. No message quotes the value it is about (it may be a pasted secret).
 */
import type { Settings } from './types.ts';
import { english, phrase, type Phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';

export interface SettingsProblem {
  /** The setting's name (e.g. "baseUrl", "extensions[2]"), or "(file)" for the file as a whole. */
  field: string;
  /**
   * What is wrong and what to write, without the setting's name: said by the edge. Absent for a
   * problem of the file itself (unreadable, not JSON), which is only logged.
   */
  words?: Words;
  /** In English with the setting's name (and, for a file, what was done): logs, errors. */
  message: string;
}

/** A setting's problem: a phrase of the catalogue's `status.settings.*`. */
export type Problem = { error: Phrase };
export type Check<T> = (value: unknown, draft: Settings) => { value: T } | Problem;
/** For lists: bad entries are dropped one by one and reported as `field[i]`. */
export type ListCheck = (value: unknown) => { value: string } | Problem;

/** The problem `id` (a `status.settings.*` message) with its values. */
export function problem(id: MessageId, values?: Record<string, string | number | Words>): Problem {
  return { error: phrase(id, values) };
}

/** A problem of a field inside an object setting ("enabled must be true or false"). */
export function inner(name: string, error: Phrase): Problem {
  return problem('status.settings.inner', { name, problem: [error] });
}

/** `"a", "b", "c"`: the choices of a setting, as the messages quote them. */
export function quoted(options: readonly string[]): string {
  return options.map((o) => `"${o}"`).join(', ');
}

export function bool(): Check<boolean> {
  return (v) => (typeof v === 'boolean' ? { value: v } : problem('status.settings.boolean'));
}

export function oneOf<T extends string>(options: readonly T[]): Check<T> {
  return (v) =>
    typeof v === 'string' && (options as readonly string[]).includes(v)
      ? { value: v as T }
      : problem('status.settings.one-of', { options: quoted(options) });
}

export function integer(
  min: number,
  max: number,
  unit: 'seconds' | 'calls' | '' = '',
): Check<number> {
  const id = unit
    ? (`status.settings.whole-${unit}` as const)
    : ('status.settings.whole-number' as const);
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? { value: v }
      : problem(id, { min: String(min), max: String(max) });
}

export type Done = (what: string) => string;

/** Problems reported per list at most; the rest are counted in one more line. */
export const MAX_LIST_PROBLEMS = 10;

export function stringList(
  maxItems: number,
  item: ListCheck,
): (
  value: unknown,
  field: string,
  done: Done,
) => { value: string[]; problems: SettingsProblem[] } | Problem {
  return (value, field, done) => {
    if (!Array.isArray(value)) return problem('status.settings.list');
    // A Set keeps the first of each value: a pasted list of 200,000 entries is checked in linear
    // time (the main process must not block on it), and only its first entries are looked at.
    const out = new Set<string>();
    const problems: SettingsProblem[] = [];
    let bad = 0;
    let extra = 0;
    for (let i = 0; i < value.length; i++) {
      if (out.size >= maxItems) {
        extra = value.length - i;
        break;
      }
      const r = item(value[i]);
      if (!('error' in r)) {
        out.add(r.value);
        continue;
      }
      bad += 1;
      if (bad <= MAX_LIST_PROBLEMS)
        problems.push(said(`${field}[${i}]`, r.error, done('it was left out')));
    }
    if (bad > MAX_LIST_PROBLEMS)
      problems.push(
        said(
          field,
          phrase('status.settings.more-entries', { count: String(bad - MAX_LIST_PROBLEMS) }),
          done('they were left out'),
        ),
      );
    if (extra > 0)
      problems.push(
        said(
          field,
          phrase('status.settings.too-many', { max: String(maxItems) }),
          done(`the ${extra} after the first ${maxItems} were left out`),
        ),
      );
    return { value: [...out], problems };
  };
}

/** A setting's problem: its words, and in English after the setting's name (logs, errors). */
export function said(field: string, error: Phrase, done: string): SettingsProblem {
  return { field, words: [error], message: `${field} ${english([error])}${done}` };
}

/** A problem said as a whole sentence that names the setting itself (unknown, secret-looking). */
export function whole(field: string, error: Phrase, done: string): SettingsProblem {
  return { field, words: [error], message: `${english([error])}${done}` };
}
