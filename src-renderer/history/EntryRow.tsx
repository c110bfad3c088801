/**
 * The frame every history row shares, whatever its kind: when it came, who (name, number), which
 * of the user's lines and how it is labelled, what became of it (its word, a length of time, the
 * "New" mark), and the row's own actions (Copy, and Open in CRM when a CRM link is set). The kind's
 * own row (CallRow, NoticeRow) decides the words; caller text is shown only through InertText.
 */
import type { ReactNode } from 'react';
import type { CallText } from '../../src-main/ipc/contract.ts';
import { InertText, spokenText } from '../shared/InertText.tsx';
import {
  calledLine,
  callerHeadline,
  callerName,
  callerNumber,
  formatCallTime,
} from '../shared/format.ts';
import { useT } from '../shared/i18n.tsx';

/** What every row is told by the list: the time, whether it is new, and its actions. */
export interface RowProps {
  now: number;
  /** An item the user had not seen when the window opened (a missed call, a voicemail, an SMS). */
  isNew: boolean;
  /** The item a notification click selected: marked current, focusable, highlighted. */
  selected?: boolean;
  copied: boolean;
  canOpenCrm: boolean;
  onCopy: (callId: string) => void;
  onOpenCrm: (callId: string) => void;
  /** Call back (issue 38): present only where the phone system offers dialling. */
  onCallBack?: (callId: string) => void;
}

export interface EntryRowProps extends RowProps {
  item: CallText & { callId: string; startedAt: number };
  /** The <li>'s class and data attributes (its kind or outcome, for styles and tests). */
  className: string;
  data: Record<`data-${string}`, string>;
  /** The word before the user's line: "Called", "To", "For". */
  lineLabel: string;
  /** More under who and which line (an SMS's text). */
  extra?: ReactNode;
  /** What became of it: its word, the modifier of its `outcome--` class, and a length of time. */
  outcome: { words: string; className: string; duration: string | null };
}

export function EntryRow({
  item,
  now,
  isNew,
  selected = false,
  className,
  data,
  lineLabel,
  extra,
  outcome,
  ...actions
}: EntryRowProps) {
  const t = useT();
  const name = callerName(item);
  const number = callerNumber(item, t);
  const headline = callerHeadline(item, t);
  const line = calledLine(item, t);
  return (
    <li
      className={selected ? `${className} entry--selected` : className}
      data-call-id={item.callId}
      {...data}
      {...(selected ? { 'aria-current': 'true' as const, tabIndex: -1 } : {})}
    >
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
          <span className="entry__label">{lineLabel}</span>
          {line.name && <InertText text={line.name} className="entry__line-name" />}
          <InertText text={line.number} className="number" />
        </span>
        {extra}
      </div>
      <div className="entry__outcome">
        <span className={`outcome outcome--${outcome.className}`}>{outcome.words}</span>
        {outcome.duration && (
          <span className="entry__duration" data-testid="history-duration">
            {outcome.duration}
          </span>
        )}
        {isNew && <span className="new-mark">{t.t('history.new')}</span>}
      </div>
      <RowActions
        id={item.callId}
        spoken={spokenText(headline, 40)}
        named={name !== null}
        {...actions}
      />
    </li>
  );
}

/** A row's own actions: Copy (the caller's number) and, when a CRM link is set, Open in CRM. */
function RowActions({
  id,
  spoken,
  named,
  copied,
  canOpenCrm,
  onCopy,
  onOpenCrm,
  onCallBack,
}: Pick<RowProps, 'copied' | 'canOpenCrm' | 'onCopy' | 'onOpenCrm' | 'onCallBack'> & {
  id: string;
  /** The caller, bounded, for the buttons' labels. */
  spoken: string;
  /** True when the caller has a name (Open in CRM), else a CRM search. */
  named: boolean;
}) {
  const t = useT();
  return (
    <div className="entry__actions">
      {onCallBack && (
        <button
          type="button"
          className="button button--small"
          data-action="call-back"
          aria-label={t.t('history.call-back-to', { caller: spoken })}
          onClick={() => onCallBack(id)}
        >
          {t.t('history.call-back')}
        </button>
      )}
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
