/**
 * Native notifications for ringing calls. Each Notification is kept in a Map until it is clicked,
 * closed or replaced: a notification object that only a local variable refers to is garbage
 * collected, and its click is then lost. A click brings up the popup.
 *
 * A missed call and a voicemail carry "Call back" as the notification's action where the core
 * offers it (the phone system dials, the number is dialable) and the OS has actions: macOS (a
 * signed app whose notifications are alerts) and Windows. Linux notifications get no action
 * (Electron's libnotify notifications take none): there a click opens the History with the call
 * selected (main: AppWindows.showHistoryAt), as on every OS. The action reports the History item's id (`onCallBack`), which main hands to
 * CallActions.callBack, the popup's and History's own path.
 *
 * A refusal is never silent: when the OS refuses a notification ('failed': on macOS, permission
 * denied or an unsigned app; on Windows, notifications turned off) the status says so with the
 * remedy (DesktopHealth 'notifications'), until one is shown again. On macOS the first start asks
 * for permission (welcome(), once per user: mac-first-start.ts), not at the first call.
 */
import type { Notification as NotificationType, NotificationConstructorOptions } from 'electron';
import type { CallCard } from '../ipc/contract.ts';
import type { NoticeAlert, Notifier, NotifyOptions } from '../core/ports/ports.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../src-shared/i18n/locale-state.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import type { DesktopHealth, DesktopProblemWords } from '../core/app/desktop-health.ts';

export interface ElectronNotifierDeps {
  create: (options: NotificationConstructorOptions) => NotificationType;
  isSupported: () => boolean;
  onClick: (callId: string) => void;
  /** A voicemail, SMS or missed-call notification was clicked (its History item id). */
  onNoticeClick?: (id: string) => void;
  /** "Call back" was pressed on a missed-call or voicemail notification (its History item id). */
  onCallBack?: (id: string) => void;
  logger: Logger;
  platform?: NodeJS.Platform;
  /** The language of the words around caller ID (English when not given). */
  words?: TranslatorSource;
  /** Where a refusal by the OS is said (the status: tray, Settings). */
  health?: DesktopHealth;
}

/** The words for notifications the OS refuses, with the remedy for this OS. */
export function notificationsOffWords(platform: NodeJS.Platform): DesktopProblemWords {
  const os = platform === 'darwin' || platform === 'win32' ? platform : 'other';
  return {
    reason: [phrase('desktop.problem.notifications.reason')],
    remedy: [phrase('desktop.problem.notifications.remedy', { os })],
  };
}

/** An ad-hoc signed macOS build: no notifications (macOS allows them to signed apps only), no updates. */
export const UNSIGNED_MAC_WORDS: DesktopProblemWords = {
  reason: [phrase('desktop.problem.unsigned-mac.reason')],
  remedy: [phrase('desktop.problem.unsigned-mac.remedy')],
};

/**
 * The most notifications held. Missed calls, voicemail and SMS stay in the notification centre
 * until the user acts (Windows' Action Centre reports no close), so beyond this the oldest is let
 * go: it stays on screen, and its click may be lost (on Windows it then opens the History).
 */
export const MAX_HELD_NOTIFICATIONS = 100;

/** The OSes whose notifications show Electron's actions (button: macOS and Windows). */
function hasActions(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || platform === 'win32';
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

  /**
   * A voicemail or SMS: its text is the caller's (the message's sender's), so on Linux, where the
   * daemon reads markup, it is escaped like caller ID; it is never made into a link by us.
   */
  showNotice(alert: NoticeAlert, options: NotifyOptions): void {
    if (!this.deps.isSupported()) return;
    this.close(alert.id);
    const linux = (this.deps.platform ?? process.platform) === 'linux';
    const callBack = this.callBackAction(options);
    const n = this.deps.create({
      title: alert.title,
      body: linux ? escapeNotificationMarkup(alert.body) : alert.body,
      silent: options.silent,
      ...(callBack ? { actions: [callBack] } : {}),
    });
    this.keep(alert.id, n, () => this.deps.onNoticeClick?.(alert.id), callBack !== null);
    n.show();
  }

  /**
   * A call the user missed: its ring notification is replaced by this one, which stays until
   * clicked (the History) or closed; "Call back" where offered and the OS has actions.
   */
  showMissed(card: CallCard, options: NotifyOptions): void {
    if (!this.deps.isSupported()) return;
    this.close(card.callId);
    const linux = (this.deps.platform ?? process.platform) === 'linux';
    const t = (this.deps.words ?? PLAIN_ENGLISH).current();
    const who = card.callerName || card.fromDisplay;
    const body = card.callerName
      ? t.t('desktop.notify.number-missed', { number: card.fromDisplay, line: card.toDisplay })
      : t.t('desktop.notify.missed-on', { line: card.toDisplay });
    const callBack = this.callBackAction(options);
    const n = this.deps.create({
      title: who ? t.t('desktop.notify.missed', { who }) : t.t('desktop.notify.missed-anonymous'),
      body: linux ? escapeNotificationMarkup(body) : body,
      silent: options.silent,
      ...(callBack ? { actions: [callBack] } : {}),
    });
    this.keep(card.callId, n, () => this.deps.onNoticeClick?.(card.callId), callBack !== null);
    n.show();
  }

  /** The "Call back" button, where the core offers it, main handles it and the OS shows actions. */
  private callBackAction(options: NotifyOptions): { type: 'button'; text: string } | null {
    if (!options.callBack || !this.deps.onCallBack) return null;
    if (!hasActions(this.deps.platform ?? process.platform)) return null;
    const t = (this.deps.words ?? PLAIN_ENGLISH).current();
    return { type: 'button', text: t.t('desktop.notify.call-back') };
  }

  /**
   * macOS, first start (onboarding or a provisioned install): one notification, so that macOS asks
   * for permission while the user is looking, not at the first call (whose banner would be the
   * prompt). mac-first-start.ts shows it once per user.
   */
  welcome(): void {
    if (!this.deps.isSupported()) return;
    const t = (this.deps.words ?? PLAIN_ENGLISH).current();
    const n = this.deps.create({
      title: t.t('desktop.notify.welcome.title'),
      body: t.t('desktop.notify.welcome.body'),
      silent: true,
    });
    this.keep('welcome', n, () => {});
    n.show();
  }

  show(card: CallCard, options: NotifyOptions): void {
    if (!this.deps.isSupported()) return;
    this.close(card.callId);
    const linux = (this.deps.platform ?? process.platform) === 'linux';
    const t = (this.deps.words ?? PLAIN_ENGLISH).current();
    const body = card.callerName
      ? t.t('desktop.notify.number-calling', { number: card.fromDisplay, line: card.toDisplay })
      : t.t('desktop.notify.calling', { line: card.toDisplay });
    const n = this.deps.create({
      title: card.callerName || card.fromDisplay || t.t('desktop.notify.incoming'),
      body: linux ? escapeNotificationMarkup(body) : body,
      silent: options.silent,
      urgency: 'critical',
      timeoutType: 'never',
    });
    this.keep(card.callId, n, () => this.deps.onClick(card.callId));
    n.show();
  }

  /**
   * Held until clicked, closed or failed (else GC takes it and the click is lost). With
   * `callBack`, its one action (index 0) is Call back for the History item `id`.
   */
  private keep(id: string, n: NotificationType, onClick: () => void, callBack = false): void {
    const forget = () => {
      if (this.live.get(id) === n) this.live.delete(id);
    };
    n.on('click', () => {
      forget();
      onClick();
    });
    if (callBack)
      n.on('action', (details) => {
        forget();
        // Electron 45: the index is the event's (the second argument is deprecated).
        if (details?.actionIndex === 0) this.deps.onCallBack?.(id);
      });
    n.on('close', forget);
    n.on('show', () => this.deps.health?.clear('notifications'));
    n.on('failed', (_e, error) => {
      forget();
      this.deps.logger.warn('notification failed', { error });
      this.deps.health?.report(
        'notifications',
        notificationsOffWords(this.deps.platform ?? process.platform),
      );
    });
    this.live.set(id, n);
    for (const oldest of this.live.keys()) {
      if (this.live.size <= MAX_HELD_NOTIFICATIONS) break;
      this.live.delete(oldest);
    }
  }

  close(callId: string): void {
    const n = this.live.get(callId);
    if (!n) return;
    this.live.delete(callId);
    n.close();
  }
}
