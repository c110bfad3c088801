/**
 * One writer at a time, the two ways the app needs it (one definition of each, instead of a
 * hand-rolled promise chain or flag loop per store):
 *
 * - LatestWriter: the state to save is whatever is current when the write starts (the call
 *   history, the relay cursor). At most one write is in flight; requests made meanwhile are
 *   coalesced into one more write of the then-current state. A failed write is logged; the next
 *   request (or one made meanwhile) writes again.
 * - SerialQueue: jobs that must run whole, one after the other, in call order (settings updates,
 *   connection rebuilds): each gets its own result or error; one job's failure does not stop the
 *   next.
 */
import type { Logger } from '../process/log.ts';

export class LatestWriter {
  private readonly save: () => Promise<void>;
  private readonly logger: Logger;
  private readonly failure: string;
  private running: Promise<void> | null = null;
  private dirty = false;

  /** `save` writes the current state; `failure` is the log line of a failed write. */
  constructor(save: () => Promise<void>, logger: Logger, failure: string) {
    this.save = save;
    this.logger = logger;
    this.failure = failure;
  }

  /** Asks for the current state to be written; resolves once it is (or its write failed). */
  write(): Promise<void> {
    this.dirty = true;
    this.running ??= this.loop();
    return this.running;
  }

  /** Resolves when no write is in flight or asked for. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async loop(): Promise<void> {
    try {
      while (this.dirty) {
        this.dirty = false;
        try {
          await this.save();
        } catch (error) {
          this.logger.error(this.failure, { error });
        }
      }
    } finally {
      this.running = null;
    }
  }
}

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `job` after every job queued before it has settled; its result or error is the caller's. */
  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job, job);
    this.tail = result.catch(() => {});
    return result;
  }
}
