/**
 * Which buttons a call's card offers, decided in one place for the view and the keyboard (Enter
 * opens the CRM only where the card shows that button). A ringing call gets everything; a call that
 * is done keeps only what still helps: the CRM record of a call the user took, the number to call
 * back after a missed one; a call a colleague took, or one that just ended, needs nothing.
 *
 * Call actions (issue 38) show only where the phone system offers them (`offered`, from main):
 * Call back on a missed call; Transfer and Hang up on a call the user answered (Complete transfer and
 * Cancel transfer while an attended transfer of it is under way); Answer and Decline on a ringing
 * call where the user's desk phone takes remote answer and main says this call's desk-phone call
 * is certain (`remote`, asked again while it rings).
 */
import type { CallAction, CallCard, RemoteAnswerView } from '../../src-main/ipc/contract.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { callerName } from '../shared/format.ts';

export type CardAction =
  | 'crm'
  | 'copy'
  | 'call-back'
  | 'answer'
  | 'decline'
  | 'transfer'
  | 'hangup'
  | 'complete-transfer'
  | 'cancel-transfer';

/**
 * `consulting`: the user started an attended transfer of this call (the caller on hold while they
 * talk to the colleague): the card offers Complete transfer and Cancel transfer instead of
 * Transfer and Hang up, until one of them is done. `remote`: main's answer on whether this ringing
 * call's desk-phone call is certain (Answer and Decline only then).
 */
export function cardActions(
  card: CallCard,
  offered: readonly CallAction[] = [],
  state: { consulting?: boolean; remote?: RemoteAnswerView | undefined } = {},
): CardAction[] {
  const crm: CardAction[] = card.canOpenCrm ? ['crm'] : [];
  const has = (a: CallAction) => offered.includes(a);
  switch (card.outcome) {
    case 'ringing': {
      const phone: CardAction[] = [];
      // Only where this call's desk-phone call is certain (never on an unknown answer).
      const certain = state.remote?.offered === true;
      if (certain && has('answer')) phone.push('answer');
      if (certain && has('decline')) phone.push('decline');
      return [...phone, ...crm, 'copy'];
    }
    case 'answered': {
      const control: CardAction[] = [];
      if (state.consulting === true && has('transfer'))
        return ['complete-transfer', 'cancel-transfer', ...crm];
      if (has('transfer')) control.push('transfer');
      if (has('hangup')) control.push('hangup');
      return [...control, ...crm];
    }
    case 'missed':
      return [...(has('dial') && card.from ? (['call-back'] as const) : []), 'copy', ...crm];
    default:
      return [];
  }
}

/** A known caller has a record to open; for an unknown one the same link is a search. */
export function crmLabel(card: CallCard, t: Translator): string {
  return callerName(card) ? t.t('popup.open-crm') : t.t('popup.search-crm');
}
