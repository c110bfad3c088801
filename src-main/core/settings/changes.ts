/**
 * Which settings changes matter to what: the one place that says which fields a running service
 * is built from, so that a saved change rebuilds exactly what depends on it (settings-service.ts's
 * needsReconnect, runtime.ts's CRM lookup) and the transport's fields are named once.
 */
import type { Settings } from './types.ts';

/** The transport's settings (net/network.ts `transportFor`): proxy and trusted CAs. */
export const TRANSPORT_FIELDS = [
  'proxyMode',
  'proxyUrl',
  'caFile',
] as const satisfies ReadonlyArray<keyof Settings>;
export type TransportSettings = Pick<Settings, (typeof TRANSPORT_FIELDS)[number]>;

/** Fields whose change needs a new connection (DND, linger, CRM, history limit do not). */
export const CONNECTION_FIELDS: ReadonlyArray<keyof Settings> = [
  'phoneSystem',
  'baseUrl',
  'apiKey',
  'extensions',
  'dids',
  'defaultRegion',
  'eventSource',
  'relayUrl',
  'relayTenant',
  'connectionMode',
  'staleRingSec',
  'demoMode',
  'features',
  // The transport (proxy and trusted CAs) is built with the connection.
  ...TRANSPORT_FIELDS,
];

/** Settings whose change builds a new CRM lookup (its own, and the transport's). */
export const CRM_FIELDS: ReadonlyArray<keyof Settings> = ['crmLookup', ...TRANSPORT_FIELDS];

/** Whether any of `fields` differs between `before` and `after` (lists and objects by value). */
export function changedAmong(
  before: Settings,
  after: Settings,
  fields: ReadonlyArray<keyof Settings>,
): boolean {
  return fields.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}
