/**
 * Organisation mode's call log (issue 39 item 5): every desktop a hunt group or queue rang sees
 * the same missed call, and with "answered and missed" each would log it. Before a call goes to
 * the real sink (the durable CRM log queue), this desktop claims its log at the relay
 * (`POST /v1/claim/<tenant>`, docs/relay-protocol.md 2.2): the first user to claim a call id holds
 * it, and only the holder's desktop logs it. Later records of a call this desktop holds (a note
 * added after the card) go through; records of a call another user holds are not logged here.
 *
 * A relay that cannot be reached (or answers 5xx, or the sign-in is not usable yet) does not make
 * a call logged twice nor dropped: the record is kept and the claim retried with the project's
 * back-off (TOKEN_BACKOFF: 1 s, 2 s ... at most 30 s, never under 250 ms), every kept call in one
 * pass. Bounded: at most `maxPending` calls are kept (the oldest is given up first), each for at
 * most `maxPendingMs` (20 h, under the relay's 24 h claim, so a claim retried late can never win
 * a call another desktop's expired claim once held). Kept calls are in memory: a restart during an
 * outage forgets them (the call is then logged by another desktop that claimed it, or by none).
 * Given up calls are logged as a warning with their call id (no numbers, no note).
 */
import { Backoff, TOKEN_BACKOFF, type BackoffPolicy } from '../../../src-shared/kit/backoff.ts';
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import {
  CALL_ID_PATTERN,
  relayClaimPath,
  type CallClaimAnswer,
} from '../../../src-shared/relay/relay-protocol.ts';
import type { TokenSource } from '../events/contracts.ts';
import type { CallLogRecord, CallLogSink } from '../ports/call-log.ts';
import { relayHttpUrl } from '../relay-client/relay-source.ts';

/** Claims a call's log; rejects when the relay cannot answer now (the claim is retried). */
export type CallClaimer = (callId: string) => Promise<CallClaimAnswer>;

export interface ClaimedCallLogDeps {
  /** The real sink (the durable queue). */
  sink: CallLogSink;
  claim: CallClaimer;
  /** Whether claims apply to the next record (organisation mode in force); else straight through. */
  active: () => boolean;
  clock: Clock;
  logger: Logger;
  backoff?: BackoffPolicy;
  random?: () => number;
  maxPending?: number;
  maxPendingMs?: number;
}

interface Pending {
  record: CallLogRecord;
  since: number;
}

/** Calls whose holder is known, remembered a day (the relay's claim lasts as long). */
const DECIDED_TTL_MS = 24 * 3600_000;

export class ClaimedCallLog implements CallLogSink {
  private readonly d: ClaimedCallLogDeps;
  private readonly logger: Logger;
  private readonly backoff: Backoff;
  private readonly maxPending: number;
  private readonly maxPendingMs: number;
  /** call id -> true when this desktop holds its log, false when another user does. */
  private readonly decided = new BoundedFifoMap<boolean>(10_000, DECIDED_TTL_MS);
  /** Calls whose claim is still to be made, the latest record of each (insertion order: oldest first). */
  private readonly pending = new Map<string, Pending>();
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(deps: ClaimedCallLogDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'call-claim' });
    this.backoff = new Backoff(deps.backoff ?? TOKEN_BACKOFF, deps.random);
    this.maxPending = deps.maxPending ?? 500;
    this.maxPendingMs = deps.maxPendingMs ?? 20 * 3600_000;
  }

  /** Calls kept until the relay answers their claim. */
  get waiting(): number {
    return this.pending.size;
  }

  async log(record: CallLogRecord): Promise<void> {
    if (!this.d.active()) return this.d.sink.log(record);
    const now = this.d.clock.now();
    const held = this.decided.get(record.callId, now);
    if (held === true) return this.d.sink.log(record);
    if (held === false) return;
    if (!CALL_ID_PATTERN.test(record.callId)) {
      this.logger.warn('call not logged: its id cannot be claimed at the relay', {
        length: record.callId.length,
      });
      return;
    }
    const kept = this.pending.get(record.callId);
    if (kept) {
      // A claim is under way or waiting: the newer record (a note) replaces the kept one.
      kept.record = record;
      return;
    }
    this.keep(record, now);
    if (this.timer === undefined) await this.attempt(record.callId);
  }

  /** Stops the retries (the kept calls are forgotten). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private keep(record: CallLogRecord, now: number): void {
    this.pending.set(record.callId, { record, since: now });
    while (this.pending.size > this.maxPending) {
      const [oldest] = this.pending.keys();
      this.pending.delete(oldest!);
      this.logger.warn('call not logged: too many calls wait for the relay', { callId: oldest });
    }
  }

  /** Claims one kept call; true when the relay answered. */
  private async attempt(callId: string): Promise<boolean> {
    let answer: CallClaimAnswer;
    try {
      answer = await this.d.claim(callId);
    } catch (error) {
      this.logger.warn('call log not claimed at the relay; retrying', { error });
      this.schedule();
      return false;
    }
    const kept = this.pending.get(callId);
    this.pending.delete(callId);
    this.decided.set(callId, answer.mine, this.d.clock.now());
    this.backoff.reset();
    if (!kept) return true;
    if (!answer.mine) {
      this.logger.info('call logged by a colleague’s app', { callId });
      return true;
    }
    try {
      await this.d.sink.log(kept.record);
    } catch (error) {
      this.logger.error('claimed call not queued', { error, callId });
    }
    return true;
  }

  private schedule(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      void this.retry();
    }, this.backoff.next());
  }

  /** One pass over the kept calls, oldest first; stops at the first the relay does not answer. */
  private async retry(): Promise<void> {
    const now = this.d.clock.now();
    for (const [callId, kept] of [...this.pending]) {
      if (this.stopped) return;
      if (now - kept.since > this.maxPendingMs) {
        this.pending.delete(callId);
        this.logger.warn('call not logged: the relay did not answer its claim in time', {
          callId,
        });
        continue;
      }
      if (!(await this.attempt(callId))) return;
    }
  }
}

export interface RelayClaimerDeps {
  relayUrl: string;
  tenant: string;
  tokens: TokenSource;
  fetch: typeof fetch;
  /**
   * This computer (CLAIM_DEVICE_PATTERN): the user's other computers are other claimants. The id
   * kept per install (claim-device.ts), so this computer's claims outlive a restart.
   */
  device?: string;
}

/** Claims at the relay with the user's organisation sign-in (as the stream's handshake sends it). */
export function relayCallClaimer(deps: RelayClaimerDeps): CallClaimer {
  return async (callId) => {
    const token = await deps.tokens.getToken();
    const res = await deps.fetch(relayHttpUrl(deps.relayUrl, relayClaimPath(deps.tenant)), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token.value}` },
      body: JSON.stringify(
        deps.device !== undefined ? { callId, device: deps.device } : { callId },
      ),
      signal: AbortSignal.timeout(15_000),
    });
    const body: unknown = await res.json().catch(() => null);
    if (res.status === 401) deps.tokens.invalidate(token.value);
    if (!res.ok) throw new Error(`the relay refused the call's claim (HTTP ${res.status})`);
    const answer = body as Partial<CallClaimAnswer> | null;
    if (
      !answer ||
      answer.callId !== callId ||
      typeof answer.holder !== 'string' ||
      typeof answer.mine !== 'boolean'
    )
      throw new Error('the relay answered the call’s claim with something else');
    return { callId, holder: answer.holder, mine: answer.mine };
  };
}
