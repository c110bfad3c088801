/** Fakes for the presenter's ports, shared by the app tests. */
import type { CallCard } from '../../src-main/ipc/contract.ts';
import type {
  ClipboardPort,
  Notifier,
  NotifyOptions,
  PopupView,
  UrlOpener,
} from '../../src-main/core/app/ports.ts';

export class FakeNotifier implements Notifier {
  shown: { card: CallCard; options: NotifyOptions }[] = [];
  open = new Set<string>();
  show(card: CallCard, options: NotifyOptions): void {
    this.shown.push({ card, options });
    this.open.add(card.callId);
  }
  close(callId: string): void {
    this.open.delete(callId);
  }
}

export class FakePopup implements PopupView {
  visible = false;
  cards: CallCard[] = [];
  shows = 0;
  show(cards: CallCard[]): void {
    this.visible = true;
    this.cards = cards;
    this.shows++;
  }
  hide(): void {
    this.visible = false;
    this.cards = [];
  }
}

export class FakeOpener implements UrlOpener {
  opened: string[] = [];
  open(url: string): void {
    this.opened.push(url);
  }
}

export class FakeClipboard implements ClipboardPort {
  text = '';
  writeText(text: string): void {
    this.text = text;
  }
}
