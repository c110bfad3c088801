/**
 * Why a server could not listen, in words an operator acts on: the address, what the system said
 * (the port is taken, not allowed, not an address of this machine) and what to change. The relay
 * and the simulator each name their own remedy (a config setting, a flag); the causes are said the
 * same way by both. Before, the simulator on a busy port died with Node's EADDRINUSE stack trace.
 */

/** What the program tells its operator to change, per cause. */
export interface ListenRemedies {
  /** EADDRINUSE: another program has the port. */
  inUse: string;
  /** EACCES: a port below 1024 without the right to use it. */
  denied: string;
  /** EADDRNOTAVAIL / ENOTFOUND: the host is not an address of this machine. */
  notHere: string;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** One line: "cannot listen on <host>:<port>: <cause> (<CODE>). <remedy>" */
export function listenFailure(
  host: string,
  port: number,
  err: unknown,
  remedies: ListenRemedies,
): string {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const code = codeOf(err);
  switch (code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: the port is in use by another program (EADDRINUSE). ${remedies.inUse}`;
    case 'EACCES':
      return `cannot listen on ${where}: this user may not use port ${port} (EACCES). ${remedies.denied}`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${where}: ${host} is not an address of this machine (${code}). ${remedies.notHere}`;
    default: {
      const text = err instanceof Error ? err.message : String(err);
      return `cannot listen on ${where}: ${text.split('\n')[0]!.slice(0, 200)}`;
    }
  }
}
