/**
 * The history's rows by kind: each kind of HistoryItem has its own row view and id. Voicemail
 * and SMS items are added here and in the contract's HistoryItem union; the list, the
 * filters, search and export stay as they are.
 */
import type { HistoryItem } from '../../src-main/ipc/contract.ts';
import { CallRow, type CallRowProps } from './CallRow.tsx';

export type RowViewProps = Omit<CallRowProps, 'entry'> & { item: HistoryItem };

/** The id main knows an item by (what copy, CRM and export send). */
export function itemId(item: HistoryItem): string {
  switch (item.kind) {
    case 'call':
      return item.callId;
  }
}

export function HistoryRowView({ item, ...props }: RowViewProps) {
  switch (item.kind) {
    case 'call':
      return <CallRow {...props} entry={item} />;
  }
}
