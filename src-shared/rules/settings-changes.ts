/**
 * Which settings changes matter to what, the one list of each (the names are the settings' own:
 * src-main/core/settings/changes.ts checks them against `Settings`, the window cannot import it):
 * what Test connection reads (the Settings window marks a shown result stale when one is edited),
 * what a running connection is built from (a saved change reconnects), what the CRM lookup is built
 * from, and the transport's (proxy and trusted CAs), which both connections go through.
 */
export const TRANSPORT_FIELDS = ['proxyMode', 'proxyUrl', 'proxyAuth', 'caFile'] as const;

/** What Test connection reads of the settings (the typed secret aside). */
export const TESTED_FIELDS = [
  'phoneSystem',
  'connectionMode',
  'relayUrl',
  'relayTenant',
  'baseUrl',
  'apiKey',
  'extensions',
  'dids',
  'defaultRegion',
] as const;

/** Fields whose change needs a new connection (DND, linger, CRM, history limit do not). */
export const CONNECTION_FIELDS = [
  ...TESTED_FIELDS,
  'eventSource',
  'staleRingSec',
  'demoMode',
  'features',
  // Remote answer subscribes to the phone's uaCSTA reports (core/calls/uacsta-match.ts).
  'answerFromDeskPhone',
  // The transport (proxy and trusted CAs) is built with the connection.
  ...TRANSPORT_FIELDS,
] as const;

/** Settings whose change builds a new CRM lookup (its own, and the transport's). */
export const CRM_FIELDS = ['crmLookup', ...TRANSPORT_FIELDS] as const;
