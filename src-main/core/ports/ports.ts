/**
 * The small interfaces the app's core talks to. Electron implements them in src-main/electron/;
 * tests implement them with plain objects. Nothing here imports Electron.
 */
import type { CallCard, HistoryEntry, StatusView } from './views.ts';

/** The demo's service: the simulator on this computer (src-shared/demo-service.ts). */
export type { DemoService } from '../../../src-shared/demo-service.ts';

/** A call started ringing for the user / stopped ringing: the engine's own event types. */
export type {
  Pop as PopEvent,
  Dismiss as DismissEvent,
  CallRecord as CallRecordEvent,
} from '../events/pipeline.ts';

export interface NotifyOptions {
  /** No sound (the user turned sound off). */
  silent: boolean;
  /**
   * Offer "Call back" as the notification's action (a missed call, a voicemail), where the OS has
   * notification actions. Set only where the phone system offers dialling and the number is one
   * Screenpop dials (CallActions.canCallBack); the action calls back the History item, through the
   * same CallActions as the popup's and History's Call back.
   */
  callBack?: boolean;
}

/** A notification that is not a call (a voicemail, an SMS): plain text only, no markup. */
export interface NoticeAlert {
  /** `voicemail:<id>` / `sms:<id>`, the History item's id. */
  id: string;
  title: string;
  body: string;
  /**
   * A voicemail's caller number, and the call it names where the phone system names one: a
   * missed-call notification of the same call gives way to it (presenters/one-notification-per-call.ts).
   */
  voicemailOf?: { from: string; callId?: string };
}

/** The OS notification centre. */
export interface Notifier {
  show(card: CallCard, options: NotifyOptions): void;
  /**
   * A call the user missed: replaces the call's ring notification and stays until clicked or
   * closed (no close() from the presenter); clicking it opens the History with the call selected.
   */
  showMissed(card: CallCard, options: NotifyOptions): void;
  /** A voicemail or SMS; clicking it opens the History with that item selected. */
  showNotice(alert: NoticeAlert, options: NotifyOptions): void;
  close(callId: string): void;
}

/** The always-on-top popup. show() must never take focus from what the user is doing. */
export interface PopupView {
  show(cards: CallCard[]): void;
  hide(): void;
}

export interface UrlOpener {
  /** Opens an already vetted URL in the user's browser or the app registered for its scheme. */
  open(url: string): Promise<void> | void;
}

export interface ClipboardPort {
  writeText(text: string): void;
}

export interface TrayView {
  setState(status: StatusView, missedCount: number, recent: HistoryEntry[]): void;
}
