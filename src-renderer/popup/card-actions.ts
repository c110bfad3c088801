/**
 * Which buttons a call's card offers, decided in one place for the view and the keyboard (Enter
 * opens the CRM only where the card shows that button). A ringing call gets everything; a call that
 * is done keeps only what still helps: the CRM record of a call the user took, the number to call
 * back after a missed one; a call a colleague took, or one that just ended, needs nothing.
 */
import type { CallCard } from '../../src-main/ipc/contract.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { callerName } from '../shared/format.ts';

export type CardAction = 'crm' | 'copy';

export function cardActions(card: CallCard): CardAction[] {
  const crm: CardAction[] = card.canOpenCrm ? ['crm'] : [];
  switch (card.outcome) {
    case 'ringing':
      return [...crm, 'copy'];
    case 'answered':
      return crm;
    case 'missed':
      return ['copy', ...crm];
    default:
      return [];
  }
}

/** A known caller has a record to open; for an unknown one the same link is a search. */
export function crmLabel(card: CallCard, t: Translator): string {
  return callerName(card) ? t.t('popup.open-crm') : t.t('popup.search-crm');
}
