/**
 * Bounded, in-memory records for a diagnostics archive: the last log lines (LogRing, a tee on the
 * logger's sink) and the connection's status changes (StatusTimeline). Old entries fall off the
 * front; memory stays bounded however long the app runs.
 */
import type { LogRecord } from '../../../src-shared/process/log.ts';

export class BoundedList<T> {
  private readonly items: T[] = [];
  private dropped = 0;
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity));
  }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length > this.capacity) {
      this.items.shift();
      this.dropped += 1;
    }
  }

  /** Oldest first, and how many older ones were dropped. */
  snapshot(): { items: T[]; dropped: number } {
    return { items: [...this.items], dropped: this.dropped };
  }
}

/** The logger's last lines (already redacted by the logger; redacted again when archived). */
export class LogRing extends BoundedList<LogRecord> {
  constructor(capacity = 1000) {
    super(capacity);
  }

  /** A sink that keeps each record here and hands it on to `next`. */
  tee(next: (record: LogRecord) => void): (record: LogRecord) => void {
    return (record) => {
      this.push(record);
      next(record);
    };
  }
}

export interface StatusChange {
  /** Wall-clock ms. */
  at: number;
  state: string;
  reason?: string;
  remedy?: string;
}

/** The connection's status changes (a repeat of the same status is not a change). */
export class StatusTimeline extends BoundedList<StatusChange> {
  private last = '';

  constructor(capacity = 200) {
    super(capacity);
  }

  record(at: number, status: { state: string; reason?: string; remedy?: string }): void {
    const key = JSON.stringify([status.state, status.reason ?? '', status.remedy ?? '']);
    if (key === this.last) return;
    this.last = key;
    this.push({
      at,
      state: status.state,
      ...(status.reason ? { reason: status.reason } : {}),
      ...(status.remedy ? { remedy: status.remedy } : {}),
    });
  }
}
