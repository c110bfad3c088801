/**
 * One call in the history: when it rang, who called (name, number), which line they called, how it
 * ended and after how long ("Answered after 8 min", never "8:00", which reads as a time of day),
 * and the row's own actions. Caller text is shown only through InertText.
 */
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';
import { InertText, spokenText } from '../shared/InertText.tsx';
import {
  calledLine,
  callerHeadline,
  callerName,
  callerNumber,
  formatCallTime,
  outcomeWords,
  ringTime,
} from '../shared/format.ts';
import { useT } from '../shared/i18n.tsx';

export interface CallRowProps {
  entry: HistoryEntry;
  now: number;
  /** A missed call the user had not seen when the window opened. */
  isNew: boolean;
  copied: boolean;
  canOpenCrm: boolean;
  onCopy: (callId: string) => void;
  onOpenCrm: (callId: string) => void;
}

/** A row's own actions: Copy (the caller's number) and, when a CRM link is set, Open in CRM. */
export function RowActions({
  id,
  spoken,
  named,
  copied,
  canOpenCrm,
  onCopy,
  onOpenCrm,
}: {
  id: string;
  /** The caller, bounded, for the buttons' labels. */
  spoken: string;
  /** True when the caller has a name (Open in CRM), else a CRM search. */
  named: boolean;
  copied: boolean;
  canOpenCrm: boolean;
  onCopy: (id: string) => void;
  onOpenCrm: (id: string) => void;
}) {
  const t = useT();
  return (
    <div className="entry__actions">
      <button
        type="button"
        className="button button--small"
        aria-label={t.t(copied ? 'history.copied-number-of' : 'history.copy-number-of', {
          caller: spoken,
        })}
        onClick={() => onCopy(id)}
      >
        {copied ? t.t('history.copied') : t.t('history.copy')}
      </button>
      {canOpenCrm && (
        <button
          type="button"
          className="button button--small"
          aria-label={t.t(named ? 'history.open-crm-for' : 'history.search-crm-for', {
            caller: spoken,
          })}
          onClick={() => onOpenCrm(id)}
        >
          {named ? t.t('history.open-crm') : t.t('history.search-crm')}
        </button>
      )}
    </div>
  );
}

export function CallRow({
  entry,
  now,
  isNew,
  copied,
  canOpenCrm,
  onCopy,
  onOpenCrm,
}: CallRowProps) {
  const t = useT();
  const name = callerName(entry);
  const number = callerNumber(entry, t);
  const headline = callerHeadline(entry, t);
  const line = calledLine(entry, t);
  const spoken = spokenText(headline, 40);
  const rang = ringTime(entry, now, t);
  return (
    <li
      className={`entry entry--${entry.outcome}`}
      data-call-id={entry.callId}
      data-outcome={entry.outcome}
    >
      <time className="entry__time" dateTime={new Date(entry.startedAt).toISOString()}>
        {formatCallTime(entry.startedAt, now, t)}
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
          <span className="entry__label">{t.t('history.called')}</span>
          {line.name && <InertText text={line.name} className="entry__line-name" />}
          <InertText text={line.number} className="number" />
        </span>
      </div>
      <div className="entry__outcome">
        <span className={`outcome outcome--${entry.outcome}`}>
          {outcomeWords(entry.outcome, t)}
        </span>
        {rang && (
          <span className="entry__duration" data-testid="history-duration">
            {rang}
          </span>
        )}
        {isNew && <span className="new-mark">{t.t('history.new')}</span>}
      </div>
      <RowActions
        id={entry.callId}
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
