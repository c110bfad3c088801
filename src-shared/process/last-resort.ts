/**
 * The last resort: what no code path caught. Every service catches what it expects; this catches
 * the rest at the three edges where an exception would otherwise end the process (the tray app's
 * main process or the headless runner) and with it every pop:
 * - timer callbacks: `guardClock()` wraps a Clock so that nothing thrown in a timer leaves it;
 * - listeners and socket handlers: what escapes them reaches the process as an uncaught exception;
 * - the process: `installOn(process)` handles `uncaughtException` and `unhandledRejection`.
 * Each fault is logged (message and stack, through the logger, so registered secrets are scrubbed)
 * and counted, and the owner is told (`onFault`): it keeps the engine running or rebuilds it, and
 * says so in its status. Nothing here exits the process.
 *
 * Faults are logged one by one at most LOGGED_PER_WINDOW times per window (log-sampler.ts), then
 * one line says how many more there were: a fault that repeats cannot write the log at its rate.
 *
 * A caught error in a loop is a fault of its own: a fault that causes the next one (a write whose
 * failure is logged by a write that fails) repeats in process.nextTick, thousands a second, and
 * starves every timer, socket and signal handler. More than `loop.faults` faults within
 * `loop.withinMs` is such a loop: it is logged once, no fault after it is logged (each is still
 * counted and told to `onFault`), and the owner is told once (`onLoop`), which ends the process:
 * nothing short of that stops a loop that never yields. The few lines before it fit in a pipe's
 * buffer, so the line saying so is not lost when the process exits behind a slow log reader.
 */
import type { Clock, TimerHandle } from './clock.ts';
import { Emitter } from '../kit/emitter.ts';
import { SecretRegistry, type Logger } from './log.ts';
import { SampledLog } from './log-sampler.ts';

export type FaultOrigin = 'timer' | 'uncaughtException' | 'unhandledRejection' | 'listener';

export interface Fault {
  origin: FaultOrigin;
  /** The error's name and first line, registered secrets scrubbed (caller data may be in it). */
  message: string;
  /** Wall-clock ms. */
  at: number;
  /** Faults so far in this process, this one included. */
  count: number;
}

/** What installOn needs of `process` (tests pass a plain EventEmitter). */
export interface ProcessEvents {
  on(
    event: 'uncaughtException' | 'unhandledRejection',
    listener: (error: unknown) => void,
  ): unknown;
  off(
    event: 'uncaughtException' | 'unhandledRejection',
    listener: (error: unknown) => void,
  ): unknown;
}

/** Longest message kept in a Fault (the log line has the whole stack). */
const MAX_MESSAGE = 300;

/** When faults are a loop: more than `faults` of them within `withinMs` (monotonic). */
export interface LoopRule {
  faults: number;
  withinMs: number;
}

/**
 * 200 within 10 s: a real fault is rare (each rebuilds the connection, at most once per 30 s), and
 * a relay serving a bug at every request still stays below 20 a second; a loop in nextTick makes
 * thousands a second and is found in well under a second, after at most 200 log lines.
 */
export const DEFAULT_LOOP_RULE: LoopRule = { faults: 200, withinMs: 10_000 };

/** Faults logged one by one per 10 s; the rest are counted in one line (log-sampler.ts). */
export const LOGGED_PER_WINDOW = 10;
const LOG_WINDOW_MS = 10_000;
const FAULT_MESSAGE = 'unexpected error caught by the last resort; carrying on';

/** What the owner is told, once, when faults turn into a loop. */
export interface FaultLoop {
  /** Faults within the rule's window (`faults` + 1). */
  faults: number;
  withinMs: number;
  /** The fault that crossed the line. */
  last: Fault;
}

export class LastResort {
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly secrets: SecretRegistry;
  private readonly listeners: Emitter<[Fault]>;
  private readonly loopListeners: Emitter<[FaultLoop]>;
  private readonly rule: LoopRule;
  /** Monotonic times of the last `rule.faults` faults, a ring (bounded whatever happens). */
  private readonly recent: number[] = [];
  private inLoop = false;
  private readonly faultLog: SampledLog;
  private count = 0;
  private last: Fault | undefined;

  constructor(deps: { logger: Logger; clock: Clock; secrets?: SecretRegistry; loop?: LoopRule }) {
    this.logger = deps.logger.child({ component: 'last-resort' });
    this.clock = deps.clock;
    this.secrets = deps.secrets ?? new SecretRegistry();
    this.listeners = new Emitter(this.logger, 'fault');
    this.loopListeners = new Emitter(this.logger, 'fault-loop');
    this.rule = deps.loop ?? DEFAULT_LOOP_RULE;
    this.faultLog = new SampledLog(this.logger, 'error', FAULT_MESSAGE, deps.clock, {
      perWindow: LOGGED_PER_WINDOW,
      windowMs: LOG_WINDOW_MS,
    });
  }

  /** Logs and counts `error`, and tells the listeners. Never throws. */
  report(origin: FaultOrigin, error: unknown): void {
    try {
      this.count++;
      const name = error instanceof Error ? error.name : typeof error;
      const text = error instanceof Error ? error.message : String(error);
      const fault: Fault = {
        origin,
        message: this.secrets.scrub(`${name}: ${text.split('\n')[0] ?? ''}`).slice(0, MAX_MESSAGE),
        at: this.clock.now(),
        count: this.count,
      };
      this.last = fault;
      const loopStarts = !this.inLoop && this.isLoop();
      if (!this.inLoop)
        this.faultLog.write({
          origin,
          count: this.count,
          name,
          // An Error keeps its code, cause chain and stack (scrubbed: log.ts errorRecord).
          error: error instanceof Error ? error : text,
        });
      this.listeners.emit(fault);
      if (loopStarts) {
        this.inLoop = true;
        const loop = { faults: this.rule.faults + 1, withinMs: this.rule.withinMs, last: fault };
        this.logger.error('unexpected errors in a loop; no more are logged', {
          faults: loop.faults,
          withinMs: loop.withinMs,
          count: this.count,
        });
        this.loopListeners.emit(loop);
      }
    } catch {
      // Logging itself failed (a sink that throws): there is nothing left to tell.
    }
  }

  /** Records this fault's time; true when it is more than rule.faults within rule.withinMs. */
  private isLoop(): boolean {
    const now = this.clock.monotonic();
    const size = this.rule.faults;
    if (size < 1) return false;
    // The slot of this fault holds the time of the fault `size` before it, if there was one.
    const slot = (this.count - 1) % size;
    const before = this.recent[slot];
    this.recent[slot] = now;
    return before !== undefined && now - before <= this.rule.withinMs;
  }

  /** Runs `fn`; whatever it throws is reported as `origin`, never rethrown. */
  run(origin: FaultOrigin, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.report(origin, error);
    }
  }

  /** `clock` whose timer callbacks run under run('timer'): a throwing callback cannot leave its timer. */
  guardClock(clock: Clock): Clock {
    return {
      now: () => clock.now(),
      monotonic: () => clock.monotonic(),
      setTimeout: (callback, ms) => clock.setTimeout(() => this.run('timer', callback), ms),
      clearTimeout: (handle) => clock.clearTimeout(handle),
    };
  }

  /** Handles the process's uncaught exceptions and unhandled rejections; returns the remover. */
  installOn(proc: ProcessEvents): () => void {
    const onException = (error: unknown) => this.report('uncaughtException', error);
    const onRejection = (reason: unknown) => this.report('unhandledRejection', reason);
    proc.on('uncaughtException', onException);
    proc.on('unhandledRejection', onRejection);
    return () => {
      proc.off('uncaughtException', onException);
      proc.off('unhandledRejection', onRejection);
    };
  }

  onFault(listener: (fault: Fault) => void): () => void {
    return this.listeners.on(listener);
  }

  /** Told once, when faults turn into a loop (LoopRule): the owner ends the process. */
  onLoop(listener: (loop: FaultLoop) => void): () => void {
    return this.loopListeners.on(listener);
  }

  /** How many faults so far, and the last one. */
  faults(): { count: number; last: Fault | undefined } {
    return { count: this.count, last: this.last ? { ...this.last } : undefined };
  }
}

/**
 * What an owner does after a fault: `recover` at once, or, within `minIntervalMs` of the last
 * recovery, once when that interval is over (a fault that repeats must not turn into a rebuild
 * loop). Returns the trigger and a cancel for stop().
 */
export function recoveryPacer(
  clock: Clock,
  minIntervalMs: number,
  recover: () => void,
): { trigger(): void; cancel(): void } {
  let lastAt = -Infinity;
  let pending: TimerHandle | undefined;
  const fire = () => {
    pending = undefined;
    lastAt = clock.monotonic();
    recover();
  };
  return {
    trigger() {
      if (pending !== undefined) return;
      const wait = lastAt + minIntervalMs - clock.monotonic();
      if (wait <= 0) fire();
      else pending = clock.setTimeout(fire, wait);
    },
    cancel() {
      clock.clearTimeout(pending);
      pending = undefined;
    },
  };
}
