/**
 * One call in the history: the shared row (EntryRow) with the line it rang ("Called"), the
 * caller's company when the contacts file or the CRM knew it, how it ended and after how long
 * ("Answered after 8 min", never "8:00", which reads as a time of day), and how long the user
 * talked where the phone system's record says ("Answered after 8 sec, talked 2 min"), and the
 * agent's note and outcome from the note card.
 */
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';
import { callerCompany, outcomeWords, ringTime, talkTime } from '../shared/format.ts';
import { InertText } from '../shared/InertText.tsx';
import { useT } from '../shared/i18n.tsx';
import { EntryRow, type RowProps } from './EntryRow.tsx';

export interface CallRowProps extends RowProps {
  entry: HistoryEntry;
}

export function CallRow({ entry, ...row }: CallRowProps) {
  const t = useT();
  // The caller's company (contacts file or CRM), under who called.
  const company = callerCompany(entry);
  // The agent's note and outcome from the note card, as text, under who called.
  const note = [entry.disposition, entry.note?.replace(/\n+/g, ' ')].filter(Boolean).join(' · ');
  const extra =
    company || note ? (
      <>
        {company && (
          <InertText text={company} className="entry__company" testId="history-company" />
        )}
        {note && <InertText text={note} className="entry__note" testId="history-note" />}
      </>
    ) : null;
  return (
    <EntryRow
      {...row}
      item={entry}
      {...(extra ? { extra } : {})}
      className={`entry entry--${entry.outcome}`}
      data={{ 'data-outcome': entry.outcome }}
      lineLabel={t.t('history.called')}
      outcome={{
        words: outcomeWords(entry.outcome, t),
        className: entry.outcome,
        duration: talkTime(entry, ringTime(entry, row.now, t), t) || null,
      }}
    />
  );
}
