/**
 * How old is an event, when the desktop's clock may be minutes (or hours) off?
 *
 * Each event gives one sample: local monotonic time at receipt minus the server's timestamp. The
 * sample is (clock offset + transport delay); the smallest recent samples are the events that
 * travelled fastest, so a low quantile of the recent samples is the offset with ~no delay in it.
 * An event's age is the server's time now (local monotonic minus that estimate) minus its stamp.
 * Using the monotonic clock, not the wall clock, makes the estimate immune to a desktop clock that
 * is simply wrong.
 *
 * Robustness: the estimate is the 10th percentile, not the minimum, so a few events with a bogus
 * future timestamp (one server node's clock ahead) cannot make every later event look stale; and it
 * never rests on fewer than `minSupport` (3) samples: it is at least the third-lowest, so one or two
 * bogus stamps are outvoted even before there is any server-clock reference (with fewer samples it
 * is the highest: at worst a ring is judged against itself, age 0, and pops; a real ring is never
 * suppressed by one bad stamp). Samples older than `windowMs` or beyond the last `maxSamples` are
 * forgotten. Delayed events
 * (webhook retries, relay replays) only add large samples, which a low quantile ignores.
 *
 * The offset itself changes when the machine sleeps (the monotonic clock stops, the server's does
 * not): the pipeline notices the wall clock jumping against the monotonic one and calls `shift()`
 * with that jump. The wall clock keeps time through a sleep, so the shifted samples are right at
 * once, even for rings the relay replays before a new server-clock reference has come (the probe
 * after a wake often fails while the Wi-Fi comes back). A jump can also be the time being changed
 * by hand, where the shift is wrong: so shifted samples are provisional, and the next reference
 * replaces them all.
 * References from the server's HTTP Date header (server-clock.ts) carry no transport delay, so the
 * first events after start, a wake or a clear are judged against the server rather than against
 * themselves. A reference counts as `maxSamples / 8` samples: a burst of delayed events (the relay
 * replaying what it held during an outage) arrives with nothing but large samples, and as plain
 * samples ten of them would outvote the one reference and make the last minute's missed rings look
 * fresh; weighted, it takes more delayed events than the buffer holds, while live events (small
 * samples) still push a reference out as they fill the buffer. With no sample at all an event is
 * its own reference (age 0): right for the WebSocket, which never replays.
 */
export interface OffsetOptions {
  maxSamples?: number;
  windowMs?: number;
  quantile?: number;
  /** The estimate is at least the `minSupport`-th lowest sample (the highest when fewer); default 3. */
  minSupport?: number;
}

export class ClockOffsetEstimator {
  private readonly maxSamples: number;
  private readonly windowMs: number;
  private readonly quantile: number;
  private readonly minSupport: number;
  /** Ring buffer of [monotonic time of receipt, sample]. */
  private readonly at: Float64Array;
  private readonly value: Float64Array;
  private next = 0;
  private count = 0;

  constructor(options: OffsetOptions = {}) {
    this.maxSamples = Math.max(1, options.maxSamples ?? 128);
    this.windowMs = options.windowMs ?? 10 * 60 * 1000;
    this.quantile = Math.min(0.5, Math.max(0, options.quantile ?? 0.1));
    this.minSupport = Math.max(1, options.minSupport ?? 3);
    this.at = new Float64Array(this.maxSamples);
    this.value = new Float64Array(this.maxSamples);
  }

  /** Samples moved by shift() and not yet confirmed by a reference. */
  private provisional = false;

  /** Forgets every sample. */
  clear(): void {
    this.count = 0;
    this.next = 0;
    this.provisional = false;
  }

  /**
   * The wall clock jumped `wallJumpMs` against the monotonic clock (a sleep of that length, or the
   * time was changed): moves every sample as a sleep would have, until the next reference.
   */
  shift(wallJumpMs: number): void {
    for (let i = 0; i < this.count; i++) this.value[i] = (this.value[i] ?? 0) - wallJumpMs;
    if (this.count > 0) this.provisional = true;
  }

  /** One sample: an event's server timestamp (ms) and the local monotonic time it arrived. */
  add(serverTimestamp: number, receivedMonotonic: number): void {
    this.at[this.next] = receivedMonotonic;
    this.value[this.next] = receivedMonotonic - serverTimestamp;
    this.next = (this.next + 1) % this.maxSamples;
    if (this.count < this.maxSamples) this.count++;
  }

  /**
   * A reading of the server's clock without transport delay (server-clock.ts): `serverMs` is what
   * it read at local monotonic time `atMonotonic`. Weighted as `maxSamples / 8` samples, and it
   * replaces samples that are only provisional after a shift() (see above).
   */
  addReference(serverMs: number, atMonotonic: number): void {
    if (this.provisional) this.clear();
    const weight = Math.max(1, Math.ceil(this.maxSamples / 8));
    for (let i = 0; i < weight; i++) this.add(serverMs, atMonotonic);
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
    const rank = Math.max(Math.floor((recent.length - 1) * this.quantile), this.minSupport - 1);
    return recent[Math.min(rank, recent.length - 1)];
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
