/**
 * Native notifications for ringing calls. Each Notification is kept in a Map until it is clicked,
 * closed or replaced: a notification object that only a local variable refers to is garbage
 * collected, and its click is then lost. A click brings up the popup.
 */
import type { Notification as NotificationType, NotificationConstructorOptions } from 'electron';
import type { CallCard } from '../ipc/contract.ts';
import type { Notifier, NotifyOptions } from '../core/app/ports.ts';
import type { Logger } from '../../src-shared/log.ts';

export interface ElectronNotifierDeps {
  create: (options: NotificationConstructorOptions) => NotificationType;
  isSupported: () => boolean;
  onClick: (callId: string) => void;
  logger: Logger;
  platform?: NodeJS.Platform;
}

/** Linux notification daemons interpret a subset of markup in the body: caller ID must not be markup. */
export function escapeNotificationMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export class ElectronNotifier implements Notifier {
  private readonly deps: ElectronNotifierDeps;
  private readonly live = new Map<string, NotificationType>();

  constructor(deps: ElectronNotifierDeps) {
    this.deps = deps;
  }

  /** How many notifications are held (tests and diagnostics). */
  get size(): number {
    return this.live.size;
  }

  show(card: CallCard, options: NotifyOptions): void {
    if (!this.deps.isSupported()) return;
    this.close(card.callId);
    const linux = (this.deps.platform ?? process.platform) === 'linux';
    const body = `${card.callerName ? `${card.fromDisplay} · ` : ''}calling ${card.toDisplay}`;
    const n = this.deps.create({
      title: card.callerName || card.fromDisplay || 'Incoming call',
      body: linux ? escapeNotificationMarkup(body) : body,
      silent: options.silent,
      urgency: 'critical',
      timeoutType: 'never',
    });
    const forget = () => {
      if (this.live.get(card.callId) === n) this.live.delete(card.callId);
    };
    n.on('click', () => {
      forget();
      this.deps.onClick(card.callId);
    });
    n.on('close', forget);
    n.on('failed', (_e, error) => {
      forget();
      this.deps.logger.warn('notification failed', { error });
    });
    this.live.set(card.callId, n);
    n.show();
  }

  close(callId: string): void {
    const n = this.live.get(callId);
    if (!n) return;
    this.live.delete(callId);
    n.close();
  }
}
