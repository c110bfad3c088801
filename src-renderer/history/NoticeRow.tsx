/**
 * A voicemail or a text message in the history: when it came, from whom, to which line, what it is
 * ("Voicemail 0:42", "SMS") and, for a message, its text. Every word of it that came from outside
 * (sender, name, message) is shown only through InertText: markup stays characters, a URL is not
 * a link, a bidi override cannot reorder the row, and a 1,600-character message is clamped on
 * screen (the whole text is in the tooltip and for screen readers).
 */
import type { SmsEntry, VoicemailEntry } from '../../src-main/ipc/contract.ts';
import { InertText, spokenText } from '../shared/InertText.tsx';
import {
  calledLine,
  callerHeadline,
  callerName,
  callerNumber,
  formatCallTime,
  voicemailLength,
} from '../shared/format.ts';
import { useT } from '../shared/i18n.tsx';
import { RowActions, type CallRowProps } from './CallRow.tsx';

export type NoticeRowProps = Omit<CallRowProps, 'entry'> & { item: VoicemailEntry | SmsEntry };

export function NoticeRow({
  item,
  now,
  isNew,
  copied,
  canOpenCrm,
  onCopy,
  onOpenCrm,
}: NoticeRowProps) {
  const t = useT();
  const name = callerName(item);
  const number = callerNumber(item, t);
  const headline = callerHeadline(item, t);
  const line = calledLine(item, t);
  const spoken = spokenText(headline, 40);
  const length = item.kind === 'voicemail' ? voicemailLength(item.durationSec, t) : null;
  return (
    <li className={`entry entry--${item.kind}`} data-call-id={item.callId} data-kind={item.kind}>
      <time className="entry__time" dateTime={new Date(item.startedAt).toISOString()}>
        {formatCallTime(item.startedAt, now, t)}
      </time>
      <div className="entry__who">
        <InertText
          text={headline}
          className={name ? 'entry__caller' : 'entry__caller number'}
          testId="history-caller"
        />
        {name && number && (
          <InertText text={number} className="entry__number number" testId="history-number" />
        )}
        <span className="entry__to" data-testid="history-called">
          <span className="entry__label">
            {item.kind === 'sms' ? t.t('history.sms-to') : t.t('history.voicemail-for')}
          </span>
          {line.name && <InertText text={line.name} className="entry__line-name" />}
          <InertText text={line.number} className="number" />
        </span>
        {item.kind === 'sms' && (
          <p className="entry__message" data-testid="history-message">
            <InertText text={item.text || t.t('history.sms-empty')} fit="clamp" />
            {item.textTruncated && (
              <span className="entry__label"> {t.t('history.sms-cut', { limit: 1600 })}</span>
            )}
          </p>
        )}
      </div>
      <div className="entry__outcome">
        <span className={`outcome outcome--${item.kind}`}>
          {item.kind === 'sms' ? t.t('history.kind-sms') : t.t('history.kind-voicemail')}
        </span>
        {length && (
          <span className="entry__duration" data-testid="history-duration">
            {length}
          </span>
        )}
        {isNew && <span className="new-mark">{t.t('history.new')}</span>}
      </div>
      <RowActions
        id={item.callId}
        spoken={spoken}
        named={name !== null}
        copied={copied}
        canOpenCrm={canOpenCrm}
        onCopy={onCopy}
        onOpenCrm={onOpenCrm}
      />
    </li>
  );
}
