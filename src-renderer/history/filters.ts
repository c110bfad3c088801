/**
 * What the history can be narrowed to: one filter (All, Missed, Answered, Voicemail, SMS) and a
 * search over names, companies, numbers and message text. No DOM, no React.
 */
import type { HistoryItem } from '../../src-main/ipc/contract.ts';
import type { MessageId } from '../../src-shared/i18n/catalogue.ts';
import { digitsOf } from '../../src-shared/rules/phone-number-rules.ts';

export interface HistoryFilter {
  id: string;
  /** The chip's word (a catalogue id). */
  label: MessageId;
  matches(item: HistoryItem): boolean;
}

export const HISTORY_FILTERS: readonly HistoryFilter[] = [
  { id: 'all', label: 'history.filter.all', matches: () => true },
  {
    id: 'missed',
    label: 'history.filter.missed',
    matches: (item) => item.kind === 'call' && item.outcome === 'missed',
  },
  {
    id: 'answered',
    label: 'history.filter.answered',
    matches: (item) =>
      item.kind === 'call' &&
      (item.outcome === 'answered' || item.outcome === 'answered-elsewhere'),
  },
  {
    id: 'voicemail',
    label: 'history.filter.voicemail',
    // Voicemails left, and the calls that went to voicemail.
    matches: (item) =>
      item.kind === 'voicemail' || (item.kind === 'call' && item.outcome === 'voicemail'),
  },
  { id: 'sms', label: 'history.filter.sms', matches: (item) => item.kind === 'sms' },
];

export function filterById(id: string): HistoryFilter {
  return HISTORY_FILTERS.find((f) => f.id === id) ?? (HISTORY_FILTERS[0] as HistoryFilter);
}

/**
 * The words a search looks in: names, the caller's company (contacts file or CRM), numbers as
 * received and as shown, the called line, and a message's text.
 */
function haystack(item: HistoryItem): string[] {
  return [
    item.callerName ?? '',
    item.kind === 'call' ? (item.callerCompany ?? '') : '',
    item.from,
    item.fromDisplay,
    item.toName ?? '',
    item.to,
    item.toDisplay,
    item.kind === 'sms' ? item.text : '',
  ];
}

/**
 * True when every word of `query` is in the item's names or numbers, ignoring case; a query with
 * digits also matches numbers whatever their spacing or prefix ("415 555 0123" finds
 * "+14155550123").
 */
export function matchesSearch(item: HistoryItem, query: string): boolean {
  const q = query.trim().toLocaleLowerCase();
  if (!q) return true;
  const fields = haystack(item).map((f) => f.toLocaleLowerCase());
  const digits = digitsOf(q);
  if (digits.length >= 2 && /^[\d\s()+.\-/]+$/.test(q)) {
    if (fields.some((f) => digitsOf(f).includes(digits))) return true;
  }
  return q.split(/\s+/).every((word) => fields.some((f) => f.includes(word)));
}

/** The items the user sees: newest first, through the filter and the search. */
export function visibleItems(
  items: readonly HistoryItem[],
  filter: HistoryFilter,
  query: string,
): HistoryItem[] {
  return items
    .filter((item) => filter.matches(item) && matchesSearch(item, query))
    .sort((a, b) => b.startedAt - a.startedAt);
}
