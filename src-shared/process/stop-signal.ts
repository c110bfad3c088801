import { readFileSync } from 'node:fs';

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
 * - npm killed outright (SIGKILL, the OOM killer): npm's shell is not ended, it is reparented (to
 *   PPID 1 or a subreaper) and keeps waiting for the program, whose own parent never changes. So
 *   when the parent is a shell, the program also watches that shell's parent: on Linux, the shell's
 *   PPID in /proc/<ppid>/stat; a change (or the shell gone) means npm is gone. Why per platform:
 *   - Linux: Debian's and Ubuntu's /bin/sh is dash, which forks the one command of `sh -c` instead
 *     of exec'ing it, so the shell stays between npm and the program.
 *   - macOS: /bin/sh is bash (or zsh, dash by choice), and bash exec's the one command of `-c`: the
 *     program's parent is npm itself, and the parent watch above covers SIGKILL too. No /proc, so
 *     nothing more is read there (and nothing is needed while the parent is npm).
 *   - Windows: npm runs scripts through cmd.exe, which waits for the program, and Windows does not
 *     reparent: `process.ppid` keeps the dead parent's number, so no change is ever seen. Ctrl+C
 *     reaches every process of the console (the usual stop); npm ended from Task Manager leaves
 *     cmd.exe and the program running: end the tree (`taskkill /T /PID <npm's pid>`). Watching would
 *     need the parent's liveness by a handle (not a number, which Windows reuses): not done.
 */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'parent-exited';

/** What this needs of `process` (tests pass a fake). */
export interface StopSource {
  on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  readonly ppid: number;
  readonly env: Record<string, string | undefined>;
}

/** A process's name and parent, as the system reports them. */
export interface ProcessInfo {
  name: string;
  ppid: number;
}

/** Looks a process up by pid; undefined when it is gone or cannot be read (not Linux). */
export type ProcessLookup = (pid: number) => ProcessInfo | undefined;

/** Linux: the process's /proc/<pid>/stat; elsewhere (no /proc), or when it is gone, undefined. */
export function procStat(pid: number): ProcessInfo | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * `pid (name) state ppid ...`: the name may hold spaces and parentheses (a program sets its own),
 * so the fields after it are found from its last ')'.
 */
export function parseProcStat(stat: string): ProcessInfo | undefined {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const ppid = Number(stat.slice(close + 2).split(' ')[1]);
  return Number.isInteger(ppid) ? { name: stat.slice(open + 1, close), ppid } : undefined;
}

/** Shells npm may run a script with (its `script-shell`, /bin/sh by default). */
const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ash', 'ksh', 'mksh', 'busybox']);

function isShell(name: string, env: StopSource['env']): boolean {
  const configured = env.npm_config_script_shell?.split(/[\\/]/).pop();
  return SHELLS.has(name) || (configured !== undefined && name === configured);
}

export interface StopOptions {
  /** How often the parent is checked under npm (ms). */
  parentPollMs?: number;
  /** How a process's parent is read (default: /proc on Linux, nothing elsewhere). */
  lookup?: ProcessLookup;
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
    const lookup = options.lookup ?? procStat;
    const parent = proc.ppid;
    // npm's shell between npm and this program: npm is the shell's parent, watched as well.
    let shell: ProcessInfo | undefined;
    try {
      shell = lookup(parent);
    } catch {
      shell = undefined; // cannot tell: the parent watch alone, as before
    }
    const npm = shell && isShell(shell.name, proc.env) && shell.ppid > 1 ? shell.ppid : undefined;
    const gone = (): boolean => {
      if (proc.ppid !== parent) return true;
      if (npm === undefined) return false;
      // Read fresh each time; a shell that cannot be read any more has gone (or is going).
      return lookup(parent)?.ppid !== npm;
    };
    const watch = setInterval(() => {
      let parentGone: boolean;
      try {
        parentGone = gone();
      } catch {
        return; // a look that failed saw nothing: never throw out of a timer
      }
      if (!parentGone) return;
      clearInterval(watch);
      stop('parent-exited');
    }, options.parentPollMs ?? 1_000);
    watch.unref(); // watching must not keep the process alive by itself
  });
}
