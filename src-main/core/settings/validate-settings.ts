/**
 * The settings schema, hand-written against Settings / DEFAULT_SETTINGS (types.ts). A settings file
 * is untrusted input (hand-edited, half-written, from another version): validation never throws on
 * it. Each bad field is reported by name with what to do about it and replaced by its default;
 * unknown fields are dropped with a warning; a field that looks like a secret is removed and
 * reported (secrets live only in the keychain). No message ever quotes the value it is about: the
 * messages are logged and shown, and a value typed or pasted into the wrong field may be a secret.
 *
 * A problem is a catalogue phrase (`status.settings.*`): the window and the runner say it in the
 * user's language beside the field (or with its label, or its flag); `message` is its English with
 * the setting's name, for logs and errors.
 *
 * This module is the driver (a file or a merged patch, field by field, in order); each field's
 * check is in setting-checks.ts, written with the small kit in settings-check-kit.ts.
 */
import type { Settings } from './types.ts';
import { DEFAULT_SETTINGS } from './types.ts';
import { isSecretName, redactTree, REDACTED } from '../../../src-shared/process/log.ts';
import { phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import { said, whole, type Check, type SettingsProblem } from './settings-check-kit.ts';
import { CHECKS, LISTS, ORDER } from './setting-checks.ts';

export type { SettingsProblem };

/** A problem with a patch: the first one, for the edge to say next to its field. */
export interface PatchProblem {
  ok: false;
  field: string;
  words: Words;
  message: string;
}

/** Thrown by SettingsStore.save/update for a value the user must correct. */
export class SettingsValidationError extends Error {
  readonly field: string;
  readonly words: Words;
  readonly problems: SettingsProblem[];

  constructor(problems: SettingsProblem[]) {
    const first = problems[0] ?? {
      field: '(settings)',
      words: [phrase('status.settings.invalid')],
      message: 'invalid settings',
    };
    super(first.message);
    this.name = 'SettingsValidationError';
    this.field = first.field;
    this.words = first.words ?? [phrase('status.settings.invalid')];
    this.problems = problems;
  }
}

export const FILE_FIELD = '(file)';

function isKnown(key: string): key is keyof Settings {
  return Object.hasOwn(DEFAULT_SETTINGS, key);
}

export function defaultSettings(): Settings {
  return structuredClone(DEFAULT_SETTINGS);
}

/**
 * Validates anything (a parsed file, a merged patch). Never throws. Each message says what is wrong,
 * what to write instead and, for a file, what was done about it.
 */
export function validateSettings(
  input: unknown,
  base: Settings = DEFAULT_SETTINGS,
): {
  settings: Settings;
  problems: SettingsProblem[];
} {
  return check(input, true, base);
}

/**
 * `base` gives the value of a field the input lacks or gets wrong: the built-in defaults, or the
 * defaults an administrator's policy presets (policy.ts).
 */
function check(
  input: unknown,
  loading: boolean,
  base: Settings = DEFAULT_SETTINGS,
): { settings: Settings; problems: SettingsProblem[] } {
  const done = (what: string) => (loading ? `; ${what}` : '');
  const settings = structuredClone(base);
  const problems: SettingsProblem[] = [];
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    problems.push(
      whole(FILE_FIELD, phrase('status.settings.not-object'), done('defaults are used')),
    );
    return { settings, problems };
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (isKnown(key)) continue;
    // The key is a name in a file someone wrote: cut, it is still recognisable.
    const name = key.slice(0, 80);
    if (isSecretName(key))
      problems.push(
        whole(key, phrase('status.settings.secret-field', { name }), done('it was removed')),
      );
    else
      problems.push(
        whole(key, phrase('status.settings.unknown-setting', { name }), done('it was dropped')),
      );
  }
  const draft = settings as unknown as Record<string, unknown>;
  for (const key of ORDER) {
    if (!Object.hasOwn(raw, key) || raw[key] === undefined) continue;
    const value = raw[key];
    if (key in LISTS) {
      const r = LISTS[key as keyof typeof LISTS](value, key, done);
      if ('error' in r) problems.push(said(key, r.error, done('the default is used')));
      else {
        draft[key] = r.value;
        problems.push(...r.problems);
      }
      continue;
    }
    const check = CHECKS[key as keyof typeof CHECKS] as Check<unknown>;
    const r = check(value, settings);
    if ('error' in r) problems.push(said(key, r.error, done('the default is used')));
    else draft[key] = r.value;
  }
  return { settings, problems };
}

/**
 * A copy of a settings file's content that is safe to keep on disk as a backup: fields that look
 * like secrets (log.ts isSecretName) are removed, and user:password@ in any address is masked.
 * Objects and lists nested deeper than any setting are left out, not copied unchecked.
 */
export function withoutSecrets(value: unknown): unknown {
  return redactTree(value, (s) => s.replace(/(\/\/)[^/@\s]*@/g, `$1${REDACTED}@`), 'drop');
}

/**
 * A change from the UI applied to `current`: the new settings, or the first problem (a patch is
 * all-or-nothing: nothing the user typed is silently replaced by a default).
 */
export function applyPatch(
  current: Settings,
  patch: Partial<Settings>,
): { ok: true; settings: Settings } | PatchProblem {
  const { settings, problems } = check({ ...current, ...patch }, false);
  const first = problems[0];
  if (!first) return { ok: true, settings };
  const words = first.words ?? [phrase('status.settings.invalid')];
  return { ok: false, field: first.field, words, message: first.message };
}
