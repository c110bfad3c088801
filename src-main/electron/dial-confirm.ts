/**
 * The confirmation a `tel:`/`callto:`/`sip:` link needs before Screenpop dials (issue 38): the
 * system's own message box (no page, so nothing a web page can script; the platform's keyboard and
 * screen-reader support) showing the number it will dial, with Call and Cancel. Cancel is the
 * default and the Escape button: a stray Enter or Escape never dials a premium number. It opens
 * only when the user clicked a link (never for a ringing call), so it takes focus from nothing
 * the user is doing with a call. A refused link is said in a message box of its own.
 */
import type { Dialog, MessageBoxOptions } from 'electron';
import type { TranslatorSource } from '../../src-shared/i18n/locale-state.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { render, type Words } from '../../src-shared/i18n/phrase.ts';

export interface DialConfirmDeps {
  dialog: Pick<Dialog, 'showMessageBox'>;
  language: TranslatorSource;
  logger: Logger;
}

/** The buttons in the order shown: Cancel first, the default and what Escape picks. */
const CANCEL = 0;
const CALL = 1;

export function dialConfirmOptions(language: TranslatorSource, shown: string): MessageBoxOptions {
  const t = language.current();
  return {
    type: 'question',
    title: t.t('desktop.dial-confirm.title'),
    message: t.t('desktop.dial-confirm.message', { number: shown }),
    detail: t.t('desktop.dial-confirm.detail'),
    buttons: [t.t('desktop.dial-confirm.cancel'), t.t('desktop.dial-confirm.call')],
    defaultId: CANCEL,
    cancelId: CANCEL,
    noLink: true,
  };
}

/** Asks; true only for Call. A box that fails to open is a Cancel. */
export async function confirmDial(d: DialConfirmDeps, shown: string): Promise<boolean> {
  try {
    const r = await d.dialog.showMessageBox(dialConfirmOptions(d.language, shown));
    return r.response === CALL;
  } catch (err) {
    d.logger.warn('call link confirmation could not be shown', { error: err });
    return false;
  }
}

/** Says why a link was not dialled (a refused link, or the phone system's refusal). */
export async function sayDialRefused(d: DialConfirmDeps, words: Words): Promise<void> {
  const t = d.language.current();
  try {
    await d.dialog.showMessageBox({
      type: 'warning',
      title: t.t('desktop.dial-confirm.title'),
      message: t.t('desktop.dial-refused'),
      detail: render(words, t),
      buttons: [t.t('desktop.dial-refused.ok')],
      defaultId: 0,
      cancelId: 0,
      noLink: true,
    });
  } catch (err) {
    d.logger.warn('call link refusal could not be shown', { error: err });
  }
}
