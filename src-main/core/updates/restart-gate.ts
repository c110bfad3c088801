/**
 * "May Screenpop restart now to install an update?" Never while a call rings for the user, and not
 * within a quiet period after the last ring stopped (the user may be answering it, calling back, or
 * still reading the card). Decided on the injected Clock: quiet time is measured on the monotonic
 * clock, so a laptop asleep after a call still waits the quiet period awake.
 *
 * The ringing calls come from the presenter's cards (a card the user closed counts as stopped at
 * that moment; the presenter ends a ring without news after 5 minutes).
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';

/** Default quiet period after the last ring. */
export const QUIET_AFTER_CALL_MS = 3 * 60_000;

export type RestartDecision =
  | { restart: true }
  | {
      restart: false;
      reason: string;
      /** When to ask again; null: when no call rings. */ retryInMs: number | null;
    };

export interface RestartGateOptions {
  clock: Clock;
  logger: Logger;
  quietAfterCallMs?: number;
}

export class RestartGate {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly quietMs: number;
  private ringing = new Set<string>();
  /** Monotonic time the last ring stopped; null when none has rung yet. */
  private lastRingEnded: number | null = null;
  private pending: (() => void) | null = null;
  private timer: TimerHandle | undefined;

  constructor(options: RestartGateOptions) {
    this.clock = options.clock;
    this.logger = options.logger.child({ component: 'restart-gate' });
    this.quietMs = options.quietAfterCallMs ?? QUIET_AFTER_CALL_MS;
  }

  /** The calls ringing right now (ids). */
  setRinging(callIds: Iterable<string>): void {
    const next = new Set(callIds);
    const stopped = [...this.ringing].some((id) => !next.has(id));
    if (stopped) this.lastRingEnded = this.clock.monotonic();
    this.ringing = next;
    this.reconsider();
  }

  decide(): RestartDecision {
    if (this.ringing.size > 0) {
      return { restart: false, reason: 'a call is ringing', retryInMs: null };
    }
    if (this.lastRingEnded !== null) {
      const quietFor = this.clock.monotonic() - this.lastRingEnded;
      if (quietFor < this.quietMs) {
        return {
          restart: false,
          reason: `a call rang ${Math.round(quietFor / 1000)} s ago`,
          retryInMs: this.quietMs - quietFor,
        };
      }
    }
    return { restart: true };
  }

  /**
   * Runs `restart` once, at the first moment decide() allows (now, if it does). A later call
   * replaces an earlier one still waiting. Returns a function that cancels it.
   */
  whenAllowed(restart: () => void): () => void {
    this.pending = restart;
    this.reconsider();
    return () => {
      if (this.pending === restart) this.cancel();
    };
  }

  private cancel(): void {
    this.pending = null;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private reconsider(): void {
    const run = this.pending;
    if (!run) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const decision = this.decide();
    if (decision.restart) {
      this.pending = null;
      try {
        run();
      } catch (err) {
        this.logger.error('restart failed', { error: err });
      }
      return;
    }
    if (decision.retryInMs !== null) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        this.reconsider();
      }, decision.retryInMs);
    }
  }
}
