/**
 * When the runner should stop, and how it is told:
 * - SIGINT or SIGTERM. Handled for as long as the process lives: a service manager and `npm` may
 *   both pass the same stop on, and a second signal must not kill the process half-way through its
 *   clean stop (Node's default action once a `once` handler is spent).
 * - Started by `npm run` / `npx` (npm sets `npm_lifecycle_event`): npm's shell stands between npm
 *   and the runner, and a SIGTERM sent to npm ends that shell without reaching the runner, which
 *   would live on as an orphan. So the runner watches its parent and stops, cleanly, once it is
 *   gone. (Not otherwise: under `nohup` or a shell's `&` a parent that exits is normal.)
 */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'parent-exited';

/** What this needs of `process` (tests pass a fake). */
export interface StopSource {
  on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  readonly ppid: number;
  readonly env: Record<string, string | undefined>;
}

export function whenToStop(proc: StopSource, parentPollMs = 1_000): Promise<StopReason> {
  return new Promise((resolve) => {
    proc.on('SIGINT', () => resolve('SIGINT'));
    proc.on('SIGTERM', () => resolve('SIGTERM'));
    if (!proc.env.npm_lifecycle_event) return;
    const parent = proc.ppid;
    const watch = setInterval(() => {
      if (proc.ppid === parent) return;
      clearInterval(watch);
      resolve('parent-exited');
    }, parentPollMs);
    watch.unref(); // watching must not keep the process alive by itself
  });
}
