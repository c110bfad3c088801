/**
 * When a long-running command (the headless runner, the relay, the simulator) should stop, and
 * how it is told; the one rule all three follow:
 * - SIGINT or SIGTERM. Handled for as long as the process lives: a service manager and `npm` may
 *   both pass the same stop on, and a second signal must not kill the process half-way through its
 *   clean stop (Node's default action once a `once` handler is spent). A program that wants a
 *   second signal to mean "now" (the relay) says so with `onRepeat`.
 * - Started by `npm run` / `npx` (npm sets `npm_lifecycle_event`): npm's shell stands between npm
 *   and the program, and a SIGTERM sent to npm ends that shell without reaching the program, which
 *   would live on as an orphan (PPID 1), still holding its port. So the program watches its parent
 *   and stops, cleanly, once it is gone. (Not otherwise: under `nohup` or a shell's `&` a parent
 *   that exits is normal.)
 */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'parent-exited';

/** What this needs of `process` (tests pass a fake). */
export interface StopSource {
  on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  readonly ppid: number;
  readonly env: Record<string, string | undefined>;
}

export interface StopOptions {
  /** How often the parent is checked under npm (ms). */
  parentPollMs?: number;
  /** A signal that came after the first stop reason (default: ignored). */
  onRepeat?: (signal: 'SIGINT' | 'SIGTERM') => void;
}

export function whenToStop(proc: StopSource, options: StopOptions = {}): Promise<StopReason> {
  let stopping = false;
  return new Promise((resolve) => {
    const stop = (reason: StopReason) => {
      if (stopping) {
        if (reason !== 'parent-exited') options.onRepeat?.(reason);
        return;
      }
      stopping = true;
      resolve(reason);
    };
    proc.on('SIGINT', () => stop('SIGINT'));
    proc.on('SIGTERM', () => stop('SIGTERM'));
    if (!proc.env.npm_lifecycle_event) return;
    const parent = proc.ppid;
    const watch = setInterval(() => {
      if (proc.ppid === parent) return;
      clearInterval(watch);
      stop('parent-exited');
    }, options.parentPollMs ?? 1_000);
    watch.unref(); // watching must not keep the process alive by itself
  });
}
