/** The settings service's port to the settings file, and that port over the SettingsStore. */
import type { Logger } from '../../../src-shared/process/log.ts';
import { NO_POLICY, withLocks, withoutLocked, type Policy } from '../settings/policy.ts';
import { SettingsValidationError, type SettingsStore } from '../settings/settings-store.ts';
import type { Settings } from '../settings/types.ts';
import { english, phrase, type Phrase, type Words } from '../../../src-shared/i18n/phrase.ts';

/** A refused patch: the field, the problem's words (said by the edge) and its English (logs). */
export interface SettingsRefusal {
  ok: false;
  field: string;
  words: Words;
  message: string;
}

export type SettingsUpdate = { ok: true; settings: Settings } | SettingsRefusal;

/** The settings file, as the settings service needs it (SettingsStore adapts to this). */
export interface SettingsPort {
  load(): Promise<Settings>;
  /** Checks a patch against the current settings without saving. */
  check(patch: Partial<Settings>): SettingsUpdate;
  /** Validates, merges and saves atomically. */
  update(patch: Partial<Settings>): Promise<SettingsUpdate>;
  /** Whether the policy locks this setting (the user cannot change it). */
  locked?(key: keyof Settings): boolean;
}

/**
 * With a policy, what the app sees is the user's settings with the locked ones at their policy
 * value; a patch's locked fields are left out (the lock wins), the rest is saved as usual. The
 * store's defaults carry the policy's presets (see main.ts / presetDefaults).
 */
export function settingsPortFor(
  store: SettingsStore,
  logger: Logger,
  policy: Policy = NO_POLICY,
): SettingsPort {
  return {
    async load() {
      const { settings, problems } = await store.load();
      if (problems.length > 0)
        logger.warn('settings loaded with problems; defaults used for those fields', {
          fields: problems.map((p) => p.field),
        });
      return withLocks(settings, policy);
    },
    locked: (key) => key in policy.locked,
    check: (patch) => {
      const result = store.check(withoutLocked(patch, policy));
      return result.ok ? { ok: true, settings: withLocks(result.settings, policy) } : result;
    },
    async update(patch) {
      try {
        const saved = await store.update(withoutLocked(patch, policy));
        return { ok: true, settings: withLocks(saved, policy) };
      } catch (err) {
        if (err instanceof SettingsValidationError)
          return { ok: false, field: err.field, words: err.words, message: err.message };
        logger.error('settings could not be saved', { error: err });
        return refusal('(file)', phrase('status.settings.not-saved'));
      }
    },
  };
}

/** A refusal in the words of `problem` (its English is the log's). */
export function refusal(field: string, problem: Phrase): SettingsRefusal {
  return { ok: false, field, words: [problem], message: english([problem]) };
}
