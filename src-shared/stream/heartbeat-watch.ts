/**
 * Is a socket alive? Judged by what arrives on it: nothing at all (no heartbeat answer, no event)
 * for two heartbeat intervals means it is dead, which is the only way to notice a half-open TCP
 * connection after sleep or a network change. The owner checks it every half interval, so a dead
 * socket is found within 2 to 2.5 intervals, and sends a heartbeat when `heartbeatDue()` says so.
 * Times are on the monotonic clock.
 */
import type { Clock } from '../process/clock.ts';

export class HeartbeatWatch {
  readonly intervalMs: number;
  private readonly clock: Clock;
  private lastHeard: number;
  private lastSent: number;

  constructor(clock: Clock, intervalMs: number) {
    this.clock = clock;
    this.intervalMs = intervalMs;
    this.lastHeard = this.lastSent = clock.monotonic();
  }

  /** Something arrived on the socket (or it just opened): it is alive now. */
  heard(): void {
    this.lastHeard = this.clock.monotonic();
  }

  /** Nothing arrived for more than two intervals. */
  silent(): boolean {
    return this.clock.monotonic() - this.lastHeard > 2 * this.intervalMs;
  }

  /**
   * True, and counted as sent, when three quarters of an interval have passed since the last
   * heartbeat (or the start): checked every half interval, that is one heartbeat per interval.
   */
  heartbeatDue(): boolean {
    const now = this.clock.monotonic();
    if (now - this.lastSent < this.intervalMs * 0.75) return false;
    this.lastSent = now;
    return true;
  }
}
