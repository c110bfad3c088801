/**
 * The connection status the tray shows, and how several sources' statuses combine into one.
 * Remedies are the service's own (docs/wire-protocol.md section 4), in words a user can act on.
 */
import type { ConnectionState, ConnectionStatus } from './contracts.ts';

export const REMEDY: Readonly<Record<number, string>> = {
  10001:
    'Correct the API key and secret in Settings; regenerate the key in the admin console if needed.',
  10002: 'Screenpop fetches a new token by itself; if this stays, check the computer clock.',
  10003: 'Edit the API key in the admin console and grant the missing scope.',
  10004: "Add this computer's public IP address to the API key's allowlist in the admin console.",
};

export const REASON: Readonly<Record<number, string>> = {
  10001: 'The API key or secret is not valid.',
  10002: 'The access token expired.',
  10003: 'The API key lacks a scope.',
  10004: "This computer's IP address is not on the API key's allowlist.",
};

/** A status for a service errcode (reason and remedy from the tables above). */
export function statusForErrcode(
  state: ConnectionState,
  errcode: number,
  reason?: string,
): ConnectionStatus {
  return {
    state,
    errcode,
    reason: reason ?? REASON[errcode] ?? `The service answered with error ${errcode}.`,
    remedy: REMEDY[errcode] ?? 'Check the connection settings.',
  };
}

export function sameStatus(a: ConnectionStatus | undefined, b: ConnectionStatus): boolean {
  return (
    !!a &&
    a.state === b.state &&
    a.reason === b.reason &&
    a.remedy === b.remedy &&
    a.errcode === b.errcode
  );
}

/**
 * One status over several sources (hot standby: any working source delivers pops).
 * - some source up (connected or degraded): `connected` if every source is connected, else
 *   `degraded`, naming the source that is not (pops still work, redundancy or a scope is missing);
 * - none up: `needs-attention` if any source needs the user, else `connecting` if any is trying,
 *   else `offline`.
 */
export function combineStatuses(
  statuses: ReadonlyArray<{ name: string; status: ConnectionStatus }>,
): ConnectionStatus {
  if (statuses.length === 0) return { state: 'offline', reason: 'Not started.' };
  const up = statuses.filter(
    (s) => s.status.state === 'connected' || s.status.state === 'degraded',
  );
  if (up.length > 0) {
    const notConnected = statuses.find((s) => s.status.state !== 'connected');
    if (!notConnected) return { state: 'connected' };
    return withSource('degraded', notConnected, statuses.length > 1);
  }
  for (const state of ['needs-attention', 'connecting', 'offline'] as const) {
    const match = statuses.find((s) => s.status.state === state);
    if (match) return withSource(state, match, statuses.length > 1);
  }
  return { state: 'offline' };
}

function withSource(
  state: ConnectionState,
  source: { name: string; status: ConnectionStatus },
  prefix: boolean,
): ConnectionStatus {
  const { status } = source;
  const what = status.reason ?? status.state;
  const out: ConnectionStatus = { state, reason: prefix ? `${source.name}: ${what}` : what };
  if (status.remedy !== undefined) out.remedy = status.remedy;
  if (status.errcode !== undefined) out.errcode = status.errcode;
  return out;
}
