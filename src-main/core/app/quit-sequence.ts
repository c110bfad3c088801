/**
 * How the tray app ends, whatever asks it to: Quit in the tray, the OS logging the user out or
 * shutting down, a second request while the first runs. The clean part (stop the connection, write
 * the history, close the demo) runs once and has a time limit: a hung step must never keep the app
 * (and with it a macOS logout or a Linux shutdown) waiting. Then `finish` ends the process, always.
 *
 * The OS gives little time when the session ends (logind's inhibitor delay is 5 s by default,
 * Windows ends the process soon after WM_ENDSESSION), so those requests have a shorter limit; a
 * later request with a shorter limit than the one running shortens it.
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';

export type QuitReason = 'user' | 'os-quit' | 'shutdown' | 'session-end' | 'update';

/** Time limits (ms) for the clean part, per reason. */
export const QUIT_DEADLINE_MS: Record<QuitReason, number> = {
  user: 5_000,
  'os-quit': 3_000,
  update: 5_000,
  shutdown: 2_000,
  'session-end': 2_000,
};

export interface QuitSequenceDeps {
  clock: Clock;
  logger: Logger;
  /** The clean part: stop the connection, write the history, close the demo. */
  shutdown: () => Promise<void>;
  /** Releases windows and tray and ends the process (app.exit); called exactly once. */
  finish: (code: number) => void;
}

export class QuitSequence {
  private readonly deps: QuitSequenceDeps;
  private readonly logger: Logger;
  private done: Promise<void> | null = null;
  private deadline: { at: number; timer: TimerHandle; expire: () => void } | null = null;
  private finished = false;

  constructor(deps: QuitSequenceDeps) {
    this.deps = deps;
    this.logger = deps.logger.child({ component: 'quit' });
  }

  /** True once quitting has begun. */
  get started(): boolean {
    return this.done !== null;
  }

  /** Begins quitting (once); resolves when the process has been told to end. */
  run(reason: QuitReason): Promise<void> {
    const limit = QUIT_DEADLINE_MS[reason];
    if (this.done) {
      this.shorten(limit, reason);
      return this.done;
    }
    this.logger.info('quitting', { reason, limitMs: limit });
    this.done = new Promise<void>((resolve) => {
      const end = (code: number) => {
        if (this.finished) return;
        this.finished = true;
        if (this.deadline) this.deps.clock.clearTimeout(this.deadline.timer);
        try {
          this.deps.finish(code);
        } finally {
          resolve();
        }
      };
      const expire = () => {
        this.logger.error('shutdown did not finish in time; quitting anyway', {
          limitMs: this.deadline ? this.deadline.at - startedAt : limit,
        });
        end(0);
      };
      const startedAt = this.deps.clock.monotonic();
      this.deadline = {
        at: startedAt + limit,
        timer: this.deps.clock.setTimeout(expire, limit),
        expire,
      };
      let steps: Promise<void>;
      try {
        steps = this.deps.shutdown();
      } catch (err) {
        steps = Promise.reject(err);
      }
      steps.then(
        () => end(0),
        (err: unknown) => {
          this.logger.error('shutdown failed', { error: err });
          end(0);
        },
      );
    });
    return this.done;
  }

  private shorten(limit: number, reason: QuitReason): void {
    const current = this.deadline;
    if (this.finished || !current) return;
    const at = this.deps.clock.monotonic() + limit;
    if (at >= current.at) return;
    this.logger.info('quitting sooner', { reason, limitMs: limit });
    this.deps.clock.clearTimeout(current.timer);
    this.deadline = { ...current, at, timer: this.deps.clock.setTimeout(current.expire, limit) };
  }
}
