/**
 * The history's rows by kind: each kind of HistoryItem has its own row view and id. The list, the
 * filters, search and export work on every kind.
 */
import type { HistoryItem } from '../../src-main/ipc/contract.ts';
import { CallRow } from './CallRow.tsx';
import type { RowProps } from './EntryRow.tsx';
import { NoticeRow } from './NoticeRow.tsx';

export type RowViewProps = RowProps & { item: HistoryItem };

/** The id main knows an item by (what copy, CRM and export send). */
export function itemId(item: HistoryItem): string {
  return item.callId;
}

/** An item that asks for the user's attention until seen: a missed call, a voicemail, an SMS. */
export function wantsAttention(item: HistoryItem): boolean {
  return item.kind === 'call' ? item.outcome === 'missed' : true;
}

export function HistoryRowView({ item, ...props }: RowViewProps) {
  switch (item.kind) {
    case 'call':
      return <CallRow {...props} entry={item} />;
    case 'voicemail':
    case 'sms':
      return <NoticeRow {...props} item={item} />;
  }
}
