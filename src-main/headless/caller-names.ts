/**
 * Names for internal callers: the tenant's extension list (extension/list through the service
 * client), kept in memory and reloaded every `refreshMs`. A pop never waits for a reload; before the
 * first load finishes it waits at most `firstLoadWaitMs`.
 */
import type { Clock, TimerHandle } from '../core/clock.ts';
import { delay } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';

export interface CallerDirectoryDeps {
  load: () => Promise<Array<{ number: string; callerIdName: string }>>;
  clock: Clock;
  logger: Logger;
  refreshMs?: number;
  firstLoadWaitMs?: number;
}

export class CallerDirectory {
  private names = new Map<string, string>();
  private readonly deps: CallerDirectoryDeps;
  private firstLoad: Promise<void> | undefined;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(deps: CallerDirectoryDeps) {
    this.deps = deps;
  }

  start(): void {
    this.firstLoad = this.reload().then(() => {
      this.firstLoad = undefined;
    });
  }

  stop(): void {
    this.stopped = true;
    this.deps.clock.clearTimeout(this.timer);
  }

  /** The caller ID name for an internal caller, or null (outside number, unknown, not loaded). */
  async nameFor(from: string): Promise<string | null> {
    if (this.firstLoad)
      await Promise.race([
        this.firstLoad,
        delay(this.deps.clock, this.deps.firstLoadWaitMs ?? 1_000),
      ]);
    return this.names.get(from.trim()) ?? null;
  }

  private async reload(): Promise<void> {
    try {
      const list = await this.deps.load();
      const names = new Map<string, string>();
      for (const e of list) if (e.callerIdName) names.set(e.number, e.callerIdName);
      this.names = names;
      this.deps.logger.info('extension list loaded', { extensions: names.size });
    } catch (error) {
      this.deps.logger.warn('cannot load the extension list; caller names stay as they were', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
    if (!this.stopped)
      this.timer = this.deps.clock.setTimeout(
        () => void this.reload(),
        this.deps.refreshMs ?? 10 * 60_000,
      );
  }
}
