/**
 * The popup's cards by kind: each kind of PopupCard has its own view, and its own key in the stack.
 * Other kinds (voicemail, SMS, a trunk warning) are added here and in the contract's
 * PopupCard union; the stack, the keys and the live region stay as they are.
 */
import type { PopupCard } from '../../src-main/ipc/contract.ts';
import { CallCardView, type CallCardViewProps } from './CallCardView.tsx';

export type CardViewProps = Omit<CallCardViewProps, 'card'> & { card: PopupCard };

/** The id the popup and main know a card by (what dismiss and the actions send back). */
export function cardId(card: PopupCard): string {
  switch (card.kind) {
    case 'call':
      return card.callId;
  }
}

export function PopupCardView(props: CardViewProps) {
  const { card } = props;
  switch (card.kind) {
    case 'call':
      return <CallCardView {...props} card={card} />;
  }
}
