/**
 * Which settings changes matter to what: the lists live in src-shared/rules/settings-changes.ts (the
 * Settings window reads them too); here they are checked against `Settings` (a misspelt field does
 * not compile) and compared (settings-service.ts's needsReconnect, runtime.ts's CRM lookup).
 */
import type { Settings } from './types.ts';
import * as lists from '../../../src-shared/rules/settings-changes.ts';

export const TRANSPORT_FIELDS: ReadonlyArray<keyof Settings> = lists.TRANSPORT_FIELDS;
export type TransportSettings = Pick<Settings, (typeof lists.TRANSPORT_FIELDS)[number]>;
export const TESTED_FIELDS: ReadonlyArray<keyof Settings> = lists.TESTED_FIELDS;
export const CONNECTION_FIELDS: ReadonlyArray<keyof Settings> = lists.CONNECTION_FIELDS;
export const CRM_FIELDS: ReadonlyArray<keyof Settings> = lists.CRM_FIELDS;

/** Whether any of `fields` differs between `before` and `after` (lists and objects by value). */
export function changedAmong(
  before: Settings,
  after: Settings,
  fields: ReadonlyArray<keyof Settings>,
): boolean {
  return fields.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}
