/**
 * What the user sees of voicemail, SMS, trunk status and presence (docs/wire-protocol.md section 6,
 * decided in ../events/notices.ts):
 *
 * - A voicemail: a History item and a notification "Voicemail from Ada Lovelace, 0:42".
 * - An SMS: a History item and a notification with the sender and a one-line preview of at most
 *   160 characters. The text is untrusted: control, bidi-override and zero-width characters are
 *   removed, it is only ever shown as text (the notifier escapes markup where the OS reads it), and
 *   nothing in it becomes a link.
 * - Either, older than an hour (a replay): History only. Do Not Disturb: History only.
 * - Trunks not registered: a lasting warning ("Calls from outside may not reach you") in the tray
 *   and above the popup's calls, until they are registered again.
 * - The user's own presence, as the phone system says it; do_not_disturb is said so.
 * - A feature whose code the key may not receive: its reason and remedy, in the status.
 */
import type { Clock } from '../../../src-shared/clock.ts';
import type { Logger } from '../../../src-shared/log.ts';
import type { StatusView } from './views.ts';
import type { FeatureStatus } from '../events/features.ts';
import type { Notice } from '../events/notices.ts';
import type { CallerDirectory } from './directory.ts';
import type { HistoryStore } from './history-store.ts';
import type { Notifier } from './ports.ts';
import { boundedText, displayText, messageText, previewText } from './text.ts';

export interface NoticePresenterOptions {
  clock: Clock;
  logger: Logger;
  directory: CallerDirectory;
  history: HistoryStore;
  notifier: Notifier;
  settings: () => { doNotDisturb: boolean; sound: boolean };
  /** The trunk warning, presence or feature problems changed: publish the status. */
  onStatusChange: () => void;
}

export const TRUNK_WARNING = 'Calls from outside may not reach you';

/** "0:42", "1:05:09"; null for an unknown duration. */
export function durationWords(sec: number | null): string | null {
  if (sec === null || !Number.isFinite(sec) || sec < 0) return null;
  const s = Math.round(sec);
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}

/** "do_not_disturb" -> "Do not disturb"; any other word the phone system sends, readable. */
export function presenceLabel(status: string): string {
  const words = displayText(status, 64).replace(/[_-]+/g, ' ').trim().toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : 'Unknown';
}

/** The warning's sentence, naming at most three trunks (a tenant may have hundreds). */
export function trunkWords(trunks: readonly string[]): string {
  const named = trunks.slice(0, 3).join(', ');
  const more = trunks.length > 3 ? ` and ${trunks.length - 3} more` : '';
  const which = trunks.length === 1 ? `trunk ${named} is` : `trunks ${named}${more} are`;
  return `${TRUNK_WARNING}: ${which} not registered.`;
}

export class NoticePresenter {
  private readonly o: NoticePresenterOptions;
  private trunksDown: string[] = [];
  private presence: StatusView['presence'] | undefined;
  private problems: NonNullable<StatusView['featureProblems']> = [];

  constructor(options: NoticePresenterOptions) {
    this.o = options;
  }

  handle(notice: Notice): void {
    switch (notice.type) {
      case 'voicemail':
      case 'sms':
        this.message(notice);
        return;
      case 'trunk':
        this.trunksDown = notice.down.map((t) => displayText(t, 64) || '?');
        if (!notice.registered)
          this.o.logger.warn('trunk not registered: calls from outside may not reach the user', {
            down: this.trunksDown.length,
          });
        this.o.onStatusChange();
        return;
      case 'presence':
        this.presence = {
          status: displayText(notice.status, 64),
          label: presenceLabel(notice.status),
          doNotDisturb: notice.status === 'do_not_disturb',
        };
        this.o.onStatusChange();
        return;
    }
  }

  /** Each feature's state from the engine: those off for lack of scope go in the status. */
  setFeatures(features: readonly FeatureStatus[]): void {
    const problems = features
      .filter((f) => f.state === 'no-scope')
      .map((f) => ({ feature: f.feature, reason: f.reason ?? '', remedy: f.remedy ?? '' }));
    if (JSON.stringify(problems) === JSON.stringify(this.problems)) return;
    this.problems = problems;
    this.o.onStatusChange();
  }

  /**
   * A new connection (another service, other settings): what the old one said about trunks,
   * presence and scopes no longer holds until the new one says it again.
   */
  reset(): void {
    // Only a change is news: the status is not published for nothing (its timeline records each).
    if (!this.trunksDown.length && !this.presence && !this.problems.length) return;
    this.trunksDown = [];
    this.presence = undefined;
    this.problems = [];
    this.o.onStatusChange();
  }

  /** The fields this presenter adds to the StatusView. */
  statusFields(): Pick<StatusView, 'trunkWarning' | 'presence' | 'featureProblems'> {
    const trunks = this.trunksDown;
    return {
      ...(trunks.length > 0
        ? { trunkWarning: { trunks: [...trunks], message: trunkWords(trunks) } }
        : {}),
      ...(this.presence ? { presence: { ...this.presence } } : {}),
      ...(this.problems.length > 0
        ? { featureProblems: this.problems.map((p) => ({ ...p })) }
        : {}),
    };
  }

  private message(notice: Extract<Notice, { type: 'voicemail' | 'sms' }>): void {
    const dir = this.o.directory;
    const from = boundedText(notice.from);
    const to = boundedText(notice.type === 'voicemail' ? notice.extension : notice.to);
    const fromDisplay = displayText(dir.format(from));
    const named =
      notice.type === 'voicemail' && notice.callerName ? displayText(notice.callerName) : '';
    const callerName = named || dir.lookup(from);
    const startedAt =
      Number.isFinite(notice.receivedAt) && notice.receivedAt > 0
        ? notice.receivedAt
        : this.o.clock.now();
    const common = {
      from,
      fromDisplay,
      callerName,
      to,
      toDisplay: displayText(dir.format(to)),
      toName: dir.lookup(to),
      startedAt,
    };
    const who = callerName || fromDisplay || 'an unknown number';
    if (notice.type === 'voicemail') {
      const added = this.o.history.recordNotice({
        kind: 'voicemail',
        callId: `voicemail:${boundedText(notice.voicemailId, 128)}`,
        ...common,
        durationSec: notice.durationSec,
      });
      const length = durationWords(notice.durationSec);
      if (added)
        this.notify(notice, {
          id: `voicemail:${notice.voicemailId}`,
          title: `Voicemail from ${who}${length ? `, ${length}` : ''}`,
          body: callerName ? `${fromDisplay} · for ${common.toDisplay}` : `For ${common.toDisplay}`,
        });
      return;
    }
    const text = messageText(notice.text);
    const added = this.o.history.recordNotice({
      kind: 'sms',
      callId: `sms:${boundedText(notice.messageId, 128)}`,
      ...common,
      text,
      textTruncated: notice.textTruncated === true,
    });
    if (added)
      this.notify(notice, {
        id: `sms:${notice.messageId}`,
        title: `SMS from ${who}`,
        body: previewText(text) || '(empty message)',
      });
  }

  private notify(notice: { notify: boolean }, alert: { id: string; title: string; body: string }) {
    const settings = this.o.settings();
    if (!notice.notify || settings.doNotDisturb) return;
    try {
      this.o.notifier.showNotice(alert, { silent: !settings.sound });
    } catch (err) {
      this.o.logger.error('notification failed', { error: err });
    }
  }
}
