/**
 * How old is an event, when the desktop's clock may be minutes (or hours) off?
 *
 * Each event gives one sample: local monotonic time at receipt minus the server's timestamp. The
 * sample is (clock offset + transport delay); the smallest recent samples are the events that
 * travelled fastest, so a low quantile of the recent samples is the offset with ~no delay in it.
 * An event's age is its own sample minus that estimate: how much later it arrived than the fastest
 * recent events. Using the monotonic clock (not the wall clock) makes the estimate immune to the
 * user or NTP changing the desktop's time; after a sleep the offset drops by the sleep's length and
 * the new, smaller samples take over at once (we keep the low end).
 *
 * Robustness: the estimate is the 10th percentile, not the minimum, so one event with a bogus
 * future timestamp cannot make every later event look stale; samples older than `windowMs` or
 * beyond the last `maxSamples` are forgotten. Delayed events (webhook retries) only add large
 * samples, which a low quantile ignores.
 *
 * Limit: with no earlier sample, the first event is its own reference and is judged fresh. On the
 * direct WebSocket that is right (the service never replays); a source that replays old events
 * should deliver something live first.
 */
export interface OffsetOptions {
  maxSamples?: number;
  windowMs?: number;
  quantile?: number;
}

export class ClockOffsetEstimator {
  private readonly maxSamples: number;
  private readonly windowMs: number;
  private readonly quantile: number;
  /** Ring buffer of [monotonic time of receipt, sample]. */
  private readonly at: Float64Array;
  private readonly value: Float64Array;
  private next = 0;
  private count = 0;

  constructor(options: OffsetOptions = {}) {
    this.maxSamples = Math.max(1, options.maxSamples ?? 128);
    this.windowMs = options.windowMs ?? 10 * 60 * 1000;
    this.quantile = Math.min(0.5, Math.max(0, options.quantile ?? 0.1));
    this.at = new Float64Array(this.maxSamples);
    this.value = new Float64Array(this.maxSamples);
  }

  /** One event: server timestamp (ms) and local monotonic time when it arrived. */
  add(serverTimestamp: number, receivedMonotonic: number): void {
    this.at[this.next] = receivedMonotonic;
    this.value[this.next] = receivedMonotonic - serverTimestamp;
    this.next = (this.next + 1) % this.maxSamples;
    if (this.count < this.maxSamples) this.count++;
  }

  /**
   * The estimated (local monotonic - server) offset from the recent samples, or undefined when
   * there are none within the window.
   */
  estimate(nowMonotonic: number): number | undefined {
    const recent: number[] = [];
    for (let i = 0; i < this.count; i++) {
      if (nowMonotonic - (this.at[i] ?? 0) <= this.windowMs) recent.push(this.value[i] ?? 0);
    }
    if (recent.length === 0) return undefined;
    recent.sort((a, b) => a - b);
    return recent[Math.floor((recent.length - 1) * this.quantile)];
  }

  /**
   * Age in ms, at `nowMonotonic`, of an event stamped `serverTimestamp` by the server: the server's
   * clock now (local monotonic minus the estimated offset) minus the stamp. Add the event first;
   * with no samples at all the age is taken as 0.
   */
  ageOf(serverTimestamp: number, nowMonotonic: number): number {
    const offset = this.estimate(nowMonotonic);
    if (offset === undefined) return 0;
    return Math.max(0, nowMonotonic - offset - serverTimestamp);
  }
}
