/**
 * The settings file (settings.json in the app's data folder). Loading never crashes the app: a
 * missing file means first run (defaults); an unreadable, corrupt or hand-edited file gives
 * problems that name the bad field, the good fields are kept, the bad ones take their defaults, the
 * original is kept beside it as `settings.json.bad-<timestamp>` (minus anything secret), and the
 * cleaned settings are written back. Every write is atomic (writeFileAtomic). The API secret is never
 * in this file: it lives in the keychain (src-main/core/credentials).
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import { parseJson } from '../../../src-shared/files/json-text.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { silentLogger } from '../../../src-shared/process/log.ts';
import type { Settings } from './types.ts';
import type { SettingsProblem } from './validate-settings.ts';
import {
  applyPatch,
  defaultSettings,
  FILE_FIELD,
  SettingsValidationError,
  validateSettings,
  withoutSecrets,
} from './validate-settings.ts';
import { SerialQueue } from '../../../src-shared/kit/one-at-a-time.ts';

export type { SettingsProblem } from './validate-settings.ts';
export { applyPatch, SettingsValidationError, validateSettings } from './validate-settings.ts';

export interface SettingsStoreDeps {
  path: string;
  logger?: Logger;
  /** Wall clock for backup names; default Date.now. */
  now?: () => number;
  /**
   * The value of every field the file lacks (first run included): the built-in defaults, or those
   * with an administrator's presets applied (policy.ts `presetDefaults`).
   */
  defaults?: Settings;
}

export class SettingsStore {
  private readonly path: string;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly defaults: Settings;
  private current: Settings | null = null;
  /** Writes one at a time, in call order, so two quick updates never lose one another. */
  private readonly queue = new SerialQueue();

  constructor(deps: SettingsStoreDeps) {
    this.path = deps.path;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'settings' });
    this.now = deps.now ?? Date.now;
    this.defaults = deps.defaults ?? defaultSettings();
  }

  private base(): Settings {
    return structuredClone(this.defaults);
  }

  /** The settings as last loaded or saved (defaults before load()). */
  settings(): Settings {
    return structuredClone(this.current ?? this.base());
  }

  async load(): Promise<{ settings: Settings; problems: SettingsProblem[] }> {
    const result = await this.read();
    for (const p of result.problems)
      this.logger.warn('settings problem', { field: p.field, problem: p.message });
    this.current = result.settings;
    return { settings: structuredClone(result.settings), problems: result.problems };
  }

  /** Validates and writes all settings; throws SettingsValidationError naming the first bad field. */
  async save(settings: Settings): Promise<void> {
    const { settings: clean, problems } = validateSettings(settings);
    if (problems.length > 0) throw new SettingsValidationError(problems);
    await this.queue.run(() => this.write(clean));
  }

  /** Checks a patch against the current settings without saving. */
  check(patch: Partial<Settings>): ReturnType<typeof applyPatch> {
    return applyPatch(this.current ?? this.base(), patch);
  }

  /** Applies a patch (all or nothing) and writes it; throws SettingsValidationError {field, message}. */
  async update(patch: Partial<Settings>): Promise<Settings> {
    return this.queue.run(async () => {
      const base = this.current ?? (await this.load()).settings;
      const result = applyPatch(base, patch);
      if (!result.ok)
        throw new SettingsValidationError([
          { field: result.field, words: result.words, message: result.message },
        ]);
      await this.write(result.settings);
      return structuredClone(result.settings);
    });
  }

  private async write(settings: Settings): Promise<void> {
    await writeFileAtomic(this.path, JSON.stringify(settings, null, 2) + '\n');
    this.current = settings;
  }

  private async read(): Promise<{ settings: Settings; problems: SettingsProblem[] }> {
    const name = basename(this.path);
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { settings: this.base(), problems: [] };
      // Not ours to overwrite: a permissions problem or a folder in the way needs the user.
      return {
        settings: this.base(),
        problems: [
          {
            field: FILE_FIELD,
            message: `${this.path} could not be read (${code ?? 'error'}); defaults are used and changes cannot be saved until it can be read (check its permissions)`,
          },
        ],
      };
    }
    const json = parseJson(text.replace(/^\uFEFF/, ''));
    if (!json.ok) {
      // We cannot know which part of a corrupt file is secret; the copy stays readable by the user only.
      const backup = await this.backup(text);
      const settings = this.base();
      await this.rewrite(settings);
      return {
        settings,
        problems: [
          {
            field: FILE_FIELD,
            message: `${name} is not valid JSON${json.where}; defaults are used. ${backup}`,
          },
        ],
      };
    }
    const parsed = json.value;
    const { settings, problems } = validateSettings(parsed, this.defaults);
    if (problems.length > 0) {
      const backup = await this.backup(JSON.stringify(withoutSecrets(parsed), null, 2) + '\n');
      await this.rewrite(settings);
      problems.push({
        field: FILE_FIELD,
        message: `${name} had problems and was rewritten without them. ${backup}`,
      });
    }
    return { settings, problems };
  }

  /** Keeps a copy beside the file; returns a sentence saying where (or that it could not). */
  private async backup(content: string): Promise<string> {
    const stamp = new Date(this.now()).toISOString().replace(/[:.]/g, '-');
    const path = `${this.path}.bad-${stamp}`;
    try {
      await writeFileAtomic(path, content);
      return `Your original was kept as ${basename(path)}.`;
    } catch (err) {
      this.logger.error('settings backup failed', { error: err });
      return 'A copy of the original could not be kept.';
    }
  }

  /** Writing the cleaned file back is best effort: a read-only folder must not stop the app. */
  private async rewrite(settings: Settings): Promise<void> {
    try {
      await this.write(settings);
    } catch (err) {
      this.logger.error('settings could not be rewritten', { error: err });
    }
  }
}
