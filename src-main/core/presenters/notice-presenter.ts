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
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { StatusView } from '../ports/views.ts';
import type { FeatureStatus } from '../events/features.ts';
import type { Notice } from '../events/notices.ts';
import type { NameDirectory } from '../contacts/directory.ts';
import type { HistoryStore } from '../history/history-store.ts';
import type { NoticeAlert, Notifier } from '../ports/ports.ts';
import { boundedText, displayText, messageText, previewText } from '../../../src-shared/ui/text.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../../src-shared/i18n/locale-state.ts';
import type { Translator } from '../../../src-shared/i18n/translator.ts';
import { render, type Words } from '../../../src-shared/i18n/phrase.ts';

export interface NoticePresenterOptions {
  clock: Clock;
  logger: Logger;
  directory: NameDirectory;
  history: HistoryStore;
  notifier: Notifier;
  settings: () => { doNotDisturb: boolean; sound: boolean };
  /** The trunk warning, presence or feature problems changed: publish the status. */
  onStatusChange: () => void;
  /** The language the user reads (English, plain, when not given: tests and the runner's JSON). */
  words?: TranslatorSource;
  /**
   * Whether Call back may be offered for a number (CallActions.canCallBack: the phone system
   * offers dialling and the number is dialable); absent: never. Voicemail only.
   */
  canCallBack?: (number: string) => boolean;
}

/** The presence words the phone system is known to send (docs/wire-protocol.md section 6). */
const KNOWN_PRESENCE = [
  'available',
  'away',
  'do_not_disturb',
  'lunch_break',
  'business_trip',
  'off_work',
] as const;

/**
 * "do_not_disturb" -> "Do not disturb" in the user's language; any other word the phone system
 * sends made readable as it is (it is the system's word, not ours).
 */
export function presenceLabel(status: string, t: Translator): string {
  const known = KNOWN_PRESENCE.find((p) => p === status);
  if (known) return t.t(`status.presence.${known}`);
  const words = displayText(status, 64).replace(/[_-]+/g, ' ').trim().toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : t.t('status.presence.unknown');
}

/** The warning's sentence, naming at most three trunks (a tenant may have hundreds). */
export function trunkWords(trunks: readonly string[], t: Translator): string {
  const more = trunks.length - 3;
  const names = trunks.slice(0, 3);
  const list = t.list(more > 0 ? [...names, t.t('status.trunk-list-more', { more })] : names);
  return t.t('status.trunk-warning', { count: trunks.length, trunks: list });
}

export class NoticePresenter {
  private readonly o: NoticePresenterOptions;
  private trunksDown: string[] = [];
  private presence: StatusView['presence'] | undefined;
  private problems: Array<
    NonNullable<StatusView['featureProblems']>[number] & {
      words?: { reason: Words; remedy: Words };
    }
  > = [];

  private readonly words: TranslatorSource;

  constructor(options: NoticePresenterOptions) {
    this.o = options;
    this.words = options.words ?? PLAIN_ENGLISH;
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
          // Said when the status is read (statusFields), in the language of that moment.
          label: '',
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
      .map((f) => ({
        feature: f.feature,
        reason: f.reason ?? '',
        remedy: f.remedy ?? '',
        ...(f.words ? { words: f.words } : {}),
      }));
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
    const t = this.words.current();
    const trunks = this.trunksDown;
    return {
      ...(trunks.length > 0
        ? { trunkWarning: { trunks: [...trunks], message: trunkWords(trunks, t) } }
        : {}),
      ...(this.presence
        ? { presence: { ...this.presence, label: presenceLabel(this.presence.status, t) } }
        : {}),
      ...(this.problems.length > 0
        ? {
            featureProblems: this.problems.map(({ words, ...p }) =>
              words
                ? { ...p, reason: render(words.reason, t), remedy: render(words.remedy, t) }
                : { ...p },
            ),
          }
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
    const t = this.words.current();
    const who = callerName || fromDisplay || t.t('status.unknown-number');
    if (notice.type === 'voicemail') {
      const added = this.o.history.recordNotice({
        kind: 'voicemail',
        callId: `voicemail:${boundedText(notice.voicemailId, 128)}`,
        ...common,
        durationSec: notice.durationSec,
      });
      const sec = notice.durationSec;
      const length =
        sec !== null && Number.isFinite(sec) && sec >= 0 ? t.duration(sec * 1000) : null;
      if (added)
        this.notify(notice, {
          // The History item's id (recordNotice's), which Call back and a click name.
          id: `voicemail:${boundedText(notice.voicemailId, 128)}`,
          // The missed-call notification of the same call gives way to this one.
          voicemailOf: { from, callId: boundedText(notice.voicemailId, 128) },
          callBack: this.callBackOffered(from),
          title: length
            ? t.t('status.voicemail-title-length', { who, length })
            : t.t('status.voicemail-title', { who }),
          body: callerName
            ? t.t('status.voicemail-body-named', { number: fromDisplay, line: common.toDisplay })
            : t.t('status.voicemail-body', { line: common.toDisplay }),
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
        // The History item's id (recordNotice's), which a click selects.
        id: `sms:${boundedText(notice.messageId, 128)}`,
        title: t.t('status.sms-title', { who }),
        body: previewText(text) || t.t('status.sms-empty'),
      });
  }

  private callBackOffered(from: string): boolean {
    try {
      return this.o.canCallBack?.(from) ?? false;
    } catch (err) {
      this.o.logger.warn('call back could not be offered', { error: err });
      return false;
    }
  }

  private notify(
    notice: { notify: boolean },
    { callBack, ...alert }: NoticeAlert & { callBack?: boolean },
  ) {
    const settings = this.o.settings();
    if (!notice.notify || settings.doNotDisturb) return;
    try {
      this.o.notifier.showNotice(alert, {
        silent: !settings.sound,
        ...(callBack ? { callBack } : {}),
      });
    } catch (err) {
      this.o.logger.error('notification failed', { error: err });
    }
  }
}
