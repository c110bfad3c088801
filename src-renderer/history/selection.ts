/**
 * A notification click selects its item in History (issue 38 follow-up): main pushes the item's id
 * (`history:select`), or keeps it for a page still loading (`history:selection`). What arrives is
 * checked here too: a string of an id's length, and then an item this list has; anything else
 * selects nothing and says nothing (a call pruned from History since its notification).
 */
import type { HistoryItem } from '../../src-main/ipc/contract.ts';
import { itemId } from './row-views.tsx';

/** The longest id main sends (its IPC checks take call ids of at most 256 characters). */
export const MAX_SELECTION_ID = 256;

/** The item of `list` that `value` names, or null. */
export function selectedItem(value: unknown, list: readonly HistoryItem[]): HistoryItem | null {
  if (typeof value !== 'string' || value === '' || value.length > MAX_SELECTION_ID) return null;
  return list.find((item) => itemId(item) === value) ?? null;
}
