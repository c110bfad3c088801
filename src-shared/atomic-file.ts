import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old file or the new one,
 * never a torn mix: write a temporary file in the same folder, fsync it, rename it over the target
 * (atomic on POSIX and on NTFS), then fsync the folder so the rename itself is durable.
 * Used for settings, call history and the relay's file state.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fsyncDir(dir);
}

async function fsyncDir(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; NTFS journals the rename anyway.
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
