/**
 * A set of listeners. `on` adds one and hands back its remover; `emit` calls each in turn, and a
 * listener that throws is logged and stops neither the others nor the caller: a timer or a socket
 * callback that emits must never be ended by what a listener does (DEVELOPERS.md).
 */
import type { Logger } from '../process/log.ts';

export class Emitter<A extends unknown[]> {
  private readonly listeners = new Set<(...args: A) => void>();
  private readonly logger: Logger;
  private readonly what: string;

  /** `what` names the listeners in the log line of one that throws ("<what> listener failed"). */
  constructor(logger: Logger, what: string) {
    this.logger = logger;
    this.what = what;
  }

  on(listener: (...args: A) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  emit(...args: A): void {
    for (const listener of this.listeners) {
      try {
        listener(...args);
      } catch (error) {
        this.logger.error(`${this.what} listener failed`, {
          error: error instanceof Error ? error : String(error),
        });
      }
    }
  }
}
