/**
 * What keeps Screenpop from working fully on this computer, as the desktop side finds it: the popup
 * cannot be shown, notifications are not allowed, the keychain cannot be used, no tray icon can be
 * seen, the window system cannot keep the popup in its place, Chromium's sandbox is off. Each is
 * reported by the part that finds it (an Electron adapter, the settings service) with its words (a
 * reason and a remedy, as phrases), and cleared when it is over. The status carries them, said in
 * the language in force (`StatusView.desktopProblems`), to the tray menu and the Settings window,
 * so a problem never stays silent in the log.
 */
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { render, type Words } from '../../../src-shared/i18n/phrase.ts';
import type { Translator } from '../../../src-shared/i18n/translator.ts';
import type { Logger } from '../../../src-shared/process/log.ts';

/** One id per kind of problem: reporting an id again replaces its words. */
export type DesktopProblemId =
  | 'popup'
  | 'notifications'
  | 'unsigned-build'
  | 'keychain'
  | 'tray'
  | 'window-system'
  | 'sandbox'
  | 'outside-applications';

export interface DesktopProblemWords {
  reason: Words;
  remedy: Words;
}

export interface DesktopProblem {
  id: DesktopProblemId;
  reason: string;
  remedy: string;
}

export class DesktopHealth {
  private readonly problems = new Map<DesktopProblemId, DesktopProblemWords>();
  private readonly changes: Emitter<[]>;
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger.child({ component: 'desktop' });
    this.changes = new Emitter(this.logger, 'desktop health');
  }

  /** The problem `id` is present, with these words; logged (in English) when it is new or changes. */
  report(id: DesktopProblemId, words: DesktopProblemWords): void {
    const before = this.problems.get(id);
    if (before && JSON.stringify(before) === JSON.stringify(words)) return;
    this.problems.set(id, words);
    this.logger.warn('desktop problem', { problem: id });
    this.changes.emit();
  }

  /** The problem `id` is over (nothing happens when it was not reported). */
  clear(id: DesktopProblemId): void {
    if (!this.problems.delete(id)) return;
    this.logger.info('desktop problem over', { problem: id });
    this.changes.emit();
  }

  has(id: DesktopProblemId): boolean {
    return this.problems.has(id);
  }

  /** The problems in the order they were first reported, said with `t`. */
  list(t: Translator): DesktopProblem[] {
    return [...this.problems].map(([id, words]) => ({
      id,
      reason: render(words.reason, t),
      remedy: render(words.remedy, t),
    }));
  }

  onChange(listener: () => void): () => void {
    return this.changes.on(listener);
  }
}
