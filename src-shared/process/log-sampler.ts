import type { Clock } from './clock.ts';
import type { LogFields, Logger } from './log.ts';

/**
 * One log message that can repeat at a rate nobody chose must not write the log at that rate: at
 * most `perWindow` lines per `windowMs`, then one line that says how many more there were. The
 * relay's lines that anyone on the network can cause (a refused handshake, a refused webhook; its
 * counters in /metrics stay exact), and the last resort's faults (last-resort.ts).
 */
export class SampledLog {
  private windowStart = Number.NEGATIVE_INFINITY;
  private written = 0;
  private suppressed = 0;
  private readonly logger: Logger;
  private readonly level: 'info' | 'warn' | 'error';
  private readonly message: string;
  private readonly clock: Clock;
  private readonly perWindow: number;
  private readonly windowMs: number;

  constructor(
    logger: Logger,
    level: 'info' | 'warn' | 'error',
    message: string,
    clock: Clock,
    options: { perWindow?: number; windowMs?: number } = {},
  ) {
    this.logger = logger;
    this.level = level;
    this.message = message;
    this.clock = clock;
    this.perWindow = options.perWindow ?? 10;
    this.windowMs = options.windowMs ?? 10_000;
  }

  write(fields: LogFields): void {
    const t = this.clock.monotonic();
    if (t - this.windowStart >= this.windowMs) {
      if (this.suppressed > 0)
        this.logger[this.level](`${this.message} (more, not logged one by one)`, {
          suppressed: this.suppressed,
          windowMs: this.windowMs,
        });
      this.windowStart = t;
      this.written = 0;
      this.suppressed = 0;
    }
    if (this.written < this.perWindow) {
      this.written += 1;
      this.logger[this.level](this.message, fields);
    } else this.suppressed += 1;
  }
}
