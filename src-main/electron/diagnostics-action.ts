/**
 * The tray's "Save diagnostics…": asks where (the native save dialog), writes the archive
 * (core/diagnostics: every section redacted), shows it in the file manager; a failure is logged
 * and said in a dialog in the user's language. A side job of the app, apart from main.ts, which
 * hands it the app's parts.
 */
import type { Clock } from '../../src-shared/process/clock.ts';
import type { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import type { Logger, SecretRegistry } from '../../src-shared/process/log.ts';
import type { Diagnostics } from '../core/diagnostics/diagnostics.ts';

export interface DiagnosticsActionDeps {
  chooseDiagnosticsPath(defaultName: string): Promise<string | null>;
  diagnostics: Pick<Diagnostics, 'write'>;
  secrets: SecretRegistry;
  clock: Clock;
  logger: Logger;
  language: Pick<LocaleState, 'current'>;
  /** shell.showItemInFolder */
  showItemInFolder(path: string): void;
  /** dialog.showErrorBox */
  showErrorBox(title: string, body: string): void;
}

export function diagnosticsAction(d: DiagnosticsActionDeps): () => Promise<void> {
  return async () => {
    const day = new Date(d.clock.now()).toISOString().slice(0, 10);
    const path = await d.chooseDiagnosticsPath(`screenpop-diagnostics-${day}.tar.gz`);
    if (!path) return;
    try {
      await d.diagnostics.write(path, { secrets: d.secrets, now: d.clock.now() });
      d.logger.info('diagnostics saved');
      d.showItemInFolder(path);
    } catch (err) {
      d.logger.error('diagnostics could not be saved', { error: err });
      const t = d.language.current();
      d.showErrorBox(
        t.t('desktop.diagnostics-failed.title'),
        t.t('desktop.diagnostics-failed.body'),
      );
    }
  };
}
