/**
 * Listener sets for the events code: one place for "add, and hand back the remover" and for
 * "call every listener; one that throws is logged and does not stop the others".
 */
import type { Logger } from '../log.ts';

export function subscribe<T>(set: Set<T>, item: T): () => void {
  set.add(item);
  return () => {
    set.delete(item);
  };
}

export function notifyAll<A extends unknown[]>(
  listeners: Iterable<(...args: A) => void>,
  args: A,
  logger: Logger,
  what: string,
): void {
  for (const listener of listeners) {
    try {
      listener(...args);
    } catch (error) {
      logger.error(`${what} listener failed`, {
        error: error instanceof Error ? error : String(error),
      });
    }
  }
}
