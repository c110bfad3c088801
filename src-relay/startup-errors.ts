/**
 * Why the relay could not start, in words an administrator acts on: what failed (which setting,
 * which address, which file), the cause as the system gave it, and what to change. Before, a
 * wrong Redis address ended the process with ioredis' "Connection is closed." and nothing else.
 *
 * Messages never quote a secret: a Redis URL is shown without its password, and a file's content
 * is never quoted (a snapshot holds callers' numbers).
 */

import { listenFailure } from '../src-shared/net/listen-error.ts';

/** A failure to start, already in plain words; cli.ts prints it and exits 1. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A Redis URL fit to print: the password (and a user name) replaced, nothing else changed. */
export function printableRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(storage.url is not a URL)';
  }
}

/**
 * The storage could not be reached at start. `err` is the last error ioredis reported (its
 * connect() only rejects with "Connection is closed." after the real cause was emitted).
 */
export function redisStartupError(
  url: string,
  err: unknown,
  connectTimeoutMs: number,
  /** Where Redis was looked for (store/redis-connection.ts: a Sentinel's or a Cluster's nodes). */
  where = `Redis at ${printableRedisUrl(url)}`,
): Error {
  const code = codeOf(err);
  const text = messageOf(err);
  let host = '';
  try {
    host = new URL(url).hostname;
  } catch {
    // printableRedisUrl says so
  }
  let cause: string;
  if (code === 'ECONNREFUSED')
    cause = 'the connection was refused: nothing listens on that port (is redis-server running?)';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    cause = `the host name ${host} was not found (${code})`;
  else if (code === 'ETIMEDOUT' || /timed? ?out/i.test(text))
    cause = `no answer within ${Math.round(connectTimeoutMs / 1000)} s (a firewall, or the wrong host or port)`;
  else if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    cause = `the host cannot be reached from here (${code})`;
  else if (/WRONGPASS|invalid password|invalid username-password/i.test(text))
    cause =
      'Redis refused the user name or password (write them in the URL: redis://:<password>@host:6379, or redis://<user>:<password>@host:6379)';
  else if (/NOAUTH|Authentication required/i.test(text))
    cause =
      'Redis requires a password and none was given (write it in the URL: redis://:<password>@host:6379)';
  else if (/Connection is closed|ECONNRESET|EPIPE/i.test(text) || code === 'ECONNRESET')
    cause =
      'the server closed the connection while it was being set up (is it a Redis server? A Redis with TLS needs rediss://)';
  else if (/All sentinels are unreachable/i.test(text))
    cause = `no sentinel gave the primary's address (check storage.sentinel.nodes and storage.sentinel.name, or RELAY_REDIS_SENTINELS and RELAY_REDIS_SENTINEL_NAME)${/Last error: (.*)/.exec(text)?.[1] ? `; the last error: ${/Last error: (.*)/.exec(text)![1]!.slice(0, 200)}` : ''}`;
  else cause = text.slice(0, 200);
  return new StartupError(
    `storage: cannot connect to ${where}: ${cause}. Check storage.url in the config (or RELAY_REDIS_URL) and that Redis accepts connections from this host.`,
  );
}

/** server.listen failed: the shared causes (src-shared/net/listen-error.ts), the relay's remedies. */
export function listenStartupError(host: string, port: number, err: unknown): Error {
  return new StartupError(
    listenFailure(host, port, err, {
      inUse: 'Stop that program (another relay?), or set port in the config (or RELAY_PORT).',
      denied:
        'Use a port above 1023 behind your load balancer, or grant the relay CAP_NET_BIND_SERVICE.',
      notHere:
        'Set host in the config (or RELAY_HOST) to one of its addresses, or 0.0.0.0 for all.',
    }),
  );
}

/** A file named in the config could not be used. `setting` is its path in the config. */
export function fileStartupError(setting: string, path: string, err: unknown): Error {
  const code = codeOf(err);
  const why =
    code === 'ENOENT'
      ? 'it does not exist'
      : code === 'EACCES' || code === 'EPERM'
        ? "the relay's user may not read it (check its owner and mode)"
        : code === 'EISDIR'
          ? 'it is a folder, not a file'
          : messageOf(err).slice(0, 200);
  return new StartupError(`${setting}: cannot read ${path}: ${why}.`);
}
