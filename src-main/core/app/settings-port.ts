/** The settings service's port to the settings file, and that port over the SettingsStore. */
import type { Logger } from '../../../src-shared/log.ts';
import { SettingsValidationError, type SettingsStore } from '../settings/settings-store.ts';
import type { Settings } from '../settings/types.ts';

export type SettingsUpdate =
  { ok: true; settings: Settings } | { ok: false; field: string; message: string };

/** The settings file, as the settings service needs it (SettingsStore adapts to this). */
export interface SettingsPort {
  load(): Promise<Settings>;
  /** Checks a patch against the current settings without saving. */
  check(patch: Partial<Settings>): SettingsUpdate;
  /** Validates, merges and saves atomically. */
  update(patch: Partial<Settings>): Promise<SettingsUpdate>;
}

export function settingsPortFor(store: SettingsStore, logger: Logger): SettingsPort {
  return {
    async load() {
      const { settings, problems } = await store.load();
      if (problems.length > 0)
        logger.warn('settings loaded with problems; defaults used for those fields', {
          fields: problems.map((p) => p.field),
        });
      return settings;
    },
    check: (patch) => store.check(patch),
    async update(patch) {
      try {
        return { ok: true, settings: await store.update(patch) };
      } catch (err) {
        if (err instanceof SettingsValidationError)
          return { ok: false, field: err.field, message: err.message };
        logger.error('settings could not be saved', { error: err });
        return { ok: false, field: '(file)', message: 'The settings could not be saved to disk.' };
      }
    },
  };
}
