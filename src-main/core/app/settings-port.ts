/** The runtime's SettingsPort over the SettingsStore (settings.json). */
import type { Logger } from '../../../src-shared/log.ts';
import { SettingsValidationError, type SettingsStore } from '../settings/settings-store.ts';
import type { SettingsPort } from './runtime.ts';

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
