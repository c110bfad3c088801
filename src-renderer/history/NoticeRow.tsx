/**
 * A voicemail or a text message in the history: the shared row (EntryRow) saying what it is
 * ("Voicemail 42 sec", "SMS"), for which line, and for a message its text. Every word of it that
 * came from outside (sender, name, message) is shown only through InertText: markup stays
 * characters, a URL is not a link, a bidi override cannot reorder the row, and a 1,600-character
 * message is clamped on screen (the whole text is in the tooltip and for screen readers).
 */
import type { SmsEntry, VoicemailEntry } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';
import { voicemailLength } from '../shared/format.ts';
import { useT } from '../shared/i18n.tsx';
import { EntryRow, type RowProps } from './EntryRow.tsx';

export interface NoticeRowProps extends RowProps {
  item: VoicemailEntry | SmsEntry;
}

export function NoticeRow({ item, ...row }: NoticeRowProps) {
  const t = useT();
  const sms = item.kind === 'sms';
  return (
    <EntryRow
      {...row}
      item={item}
      className={`entry entry--${item.kind}`}
      data={{ 'data-kind': item.kind }}
      lineLabel={sms ? t.t('history.sms-to') : t.t('history.voicemail-for')}
      extra={
        item.kind === 'sms' && (
          <p className="entry__message" data-testid="history-message">
            <InertText text={item.text || t.t('history.sms-empty')} fit="clamp" />
            {item.textTruncated && (
              <span className="entry__label"> {t.t('history.sms-cut', { limit: 1600 })}</span>
            )}
          </p>
        )
      }
      outcome={{
        words: sms ? t.t('history.kind-sms') : t.t('history.kind-voicemail'),
        className: item.kind,
        duration: item.kind === 'voicemail' ? voicemailLength(item.durationSec, t) : null,
      }}
    />
  );
}
