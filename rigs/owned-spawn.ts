/**
 * A server a test starts dies with the test's worker process. The tests stop what they start in
 * afterAll, but a worker that is killed (a timeout, Vitest tearing down, the machine's OOM killer)
 * runs no afterAll: its redis-server, tinyproxy, simulator or relay was left at PPID 1, still
 * listening (seen in session 3: an orphan redis-server after a helper's run). On Linux the command
 * is started through util-linux's `setpriv --pdeathsig KILL`, which sets the parent-death signal
 * and then executes the command (same pid, same arguments): when the worker dies, the kernel kills
 * the server. Elsewhere (macOS, or no setpriv) the command is returned unchanged.
 */
import { existsSync } from 'node:fs';

const SETPRIV = '/usr/bin/setpriv';
const available = process.platform === 'linux' && existsSync(SETPRIV);

/** `[command, args]` to spawn so that the process is killed when this process dies. */
export function ownedByThisProcess(command: string, args: readonly string[]): [string, string[]] {
  return available
    ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]]
    : [command, [...args]];
}
