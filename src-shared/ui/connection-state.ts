/**
 * The connection's state as the tray and the Settings window's status panel say it. Pure, so the
 * renderer uses it too (it imports only types from src-main/).
 */

/** What the tray shows. `needs-attention` stops retries until the user acts (bad key, IP blocked). */
export type ConnectionState =
  'connected' | 'connecting' | 'degraded' | 'offline' | 'needs-attention';

const CONNECTION_STATES: readonly ConnectionState[] = [
  'connected',
  'connecting',
  'degraded',
  'offline',
  'needs-attention',
];

/**
 * A status's state as one the UI has words for (the tray, the status panel): a value an older or
 * newer main might send reads as 'connecting'.
 */
export function knownState(state: ConnectionState): ConnectionState {
  return CONNECTION_STATES.includes(state) ? state : 'connecting';
}
