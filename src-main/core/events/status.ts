/**
 * The connection status the tray shows, and how several sources' statuses combine into one. The
 * words for a service's fault come from src-shared/api/service-errors.ts, the same as Test connection's.
 */
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { ErrorDescription } from '../../../src-shared/api/service-errors.ts';
import type { Verdict } from '../../../src-shared/stream/stream-engine.ts';
import type { ConnectionState, ConnectionStatus } from './contracts.ts';
import { english, phrase, type Words } from '../../../src-shared/i18n/phrase.ts';

/** Every source's status before start() and after stop() finished. */
export const NOT_STARTED: ConnectionStatus = saidStatus('offline', [phrase('status.not-started')]);

/**
 * A status and its listeners, held the way EventSource.onStatus promises (contracts.ts): a
 * listener hears every change from the moment it subscribes, and nothing before (`get()` reads
 * the current status); setting a status equal to the current one tells no one; a listener that
 * throws is logged and the others still hear it.
 */
export class StatusHolder {
  private current: ConnectionStatus;
  private readonly listeners: Emitter<[ConnectionStatus]>;

  constructor(logger: Logger, initial: ConnectionStatus = NOT_STARTED) {
    this.current = initial;
    this.listeners = new Emitter(logger, 'status');
  }

  get(): ConnectionStatus {
    return { ...this.current };
  }

  /** Sets the status; tells the listeners when it changed. */
  set(status: ConnectionStatus): void {
    if (sameStatus(this.current, status)) return;
    this.current = status;
    this.listeners.emit({ ...status });
  }

  on(listener: (status: ConnectionStatus) => void): () => void {
    return this.listeners.on(listener);
  }
}

/** A status in a fault's words (reason, remedy, and the service's errcode when it gave one). */
export function faultStatus(
  state: ConnectionState,
  fault: Pick<ErrorDescription, 'reason' | 'remedy' | 'errcode'> & {
    words?: ErrorDescription['words'];
    fault?: ErrorDescription['fault'];
  },
): ConnectionStatus {
  return {
    state,
    reason: fault.reason,
    remedy: fault.remedy,
    ...(fault.fault !== undefined && { fault: fault.fault }),
    ...(fault.errcode !== undefined && { errcode: fault.errcode }),
    ...(fault.words && { words: fault.words }),
  };
}

/**
 * What a fault means for a stream: one a person must fix (a proxy's refusal, a certificate, a
 * wrong secret) needs attention and waits for them; any other is retried after the back-off.
 */
export function faultVerdict(fault: ErrorDescription): Verdict<ConnectionStatus> {
  return fault.needsUser
    ? { next: 'attention', status: faultStatus('needs-attention', fault) }
    : { next: 'back-off', status: faultStatus('offline', fault) };
}

/**
 * A status in catalogue phrases: `reason`/`remedy` in English for logs and JSON, `words` for the
 * edge to say in the user's language.
 */
export function saidStatus(
  state: ConnectionState,
  reason: Words,
  remedy?: Words,
  errcode?: number,
): ConnectionStatus {
  return {
    state,
    reason: english(reason),
    ...(remedy && { remedy: english(remedy) }),
    ...(errcode !== undefined && { errcode }),
    words: remedy ? { reason, remedy } : { reason },
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
  if (statuses.length === 0) return NOT_STARTED;
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
  if (status.fault !== undefined) out.fault = status.fault;
  if (status.words) {
    const reason = status.words.reason;
    out.words = {
      ...status.words,
      ...(reason && {
        reason: prefix
          ? [phrase('status.from-source', { source: source.name, text: reason })]
          : reason,
      }),
    };
  }
  return out;
}
