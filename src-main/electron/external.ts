/** shell.openExternal behind the one URL gate (https or administrator-allowed schemes only). */
import type { Shell } from 'electron';
import type { UrlOpener } from '../core/ports/ports.ts';
import { vetExternalUrl } from '../core/links/external-url.ts';
import type { Logger } from '../../src-shared/process/log.ts';

export class SafeExternalOpener implements UrlOpener {
  private readonly shell: Pick<Shell, 'openExternal'>;
  private readonly allowedSchemes: () => readonly string[];
  private readonly logger: Logger;

  constructor(
    shell: Pick<Shell, 'openExternal'>,
    allowedSchemes: () => readonly string[],
    logger: Logger,
  ) {
    this.shell = shell;
    this.allowedSchemes = allowedSchemes;
    this.logger = logger.child({ component: 'open-external' });
  }

  /** Opens `url` if it passes vetting; rejects with a plain message when it does not or fails. */
  async open(url: string): Promise<void> {
    const vetted = vetExternalUrl(url, this.allowedSchemes());
    if (!vetted.ok) {
      this.logger.warn('external link refused', { reason: vetted.message });
      throw new Error(vetted.message);
    }
    await this.shell.openExternal(vetted.url, { activate: true });
  }

  /** open() that never throws: for links from page navigation, which nobody awaits. */
  async tryOpen(url: string): Promise<boolean> {
    try {
      await this.open(url);
      return true;
    } catch (err) {
      this.logger.warn('external link not opened', { error: err });
      return false;
    }
  }
}
