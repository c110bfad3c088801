import { open, stat, unlink } from 'node:fs/promises';

/**
 * One writer at a time across processes: the running relay (redeeming a code) and the
 * `relay users` command (adding, revoking) both read, change and rewrite the users file, and
 * without this one could write back a copy that lacks the other's change. The lock is a file
 * created exclusively beside the data; one left by a process that died is taken over once it is
 * older than `staleMs` (a write takes milliseconds).
 */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T>,
  options: { waitMs?: number; staleMs?: number } = {},
): Promise<T> {
  const lock = `${path}.lock`;
  const waitMs = options.waitMs ?? 5_000;
  const staleMs = options.staleMs ?? 10_000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.writeFile(`${process.pid} ${new Date().toISOString()}\n`);
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > staleMs) {
        await unlink(lock).catch(() => {});
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(
          `${path} is locked by another process (${lock}); if no relay or "relay users" command is running, delete that file`,
          { cause: err },
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => {});
  }
}
