import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/** Why a path cannot be the target of an atomic write. */
export type UnusableTarget = 'device' | 'fifo' | 'socket' | 'directory' | 'missing' | 'other';

/**
 * The path names something that is not a regular file (a device such as /dev/null, a FIFO, a
 * socket, a folder, or a symbolic link to one of them), or a new name in a folder that does not
 * exist when the caller asked not to create folders. Renaming over such a path would replace the
 * device or pipe with a plain file (as root, /dev/null itself), so nothing is written.
 */
export class UnusableTargetError extends Error {
  readonly path: string;
  readonly what: UnusableTarget;

  constructor(path: string, what: UnusableTarget) {
    super(`${path}: ${WORDS[what]}; name a new or existing regular file`);
    this.name = 'UnusableTargetError';
    this.path = path;
    this.what = what;
  }
}

const WORDS: Record<UnusableTarget, string> = {
  device: 'is a device, not a file',
  fifo: 'is a named pipe (FIFO), not a file',
  socket: 'is a socket, not a file',
  directory: 'is a folder, not a file',
  missing: 'its folder does not exist',
  other: 'is not a regular file',
};

function kindOf(stats: Stats): UnusableTarget | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isDirectory()) return 'directory';
  return 'other';
}

function absent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export interface AtomicWriteOptions {
  /**
   * Create the folder (and its parents) when it does not exist: yes for the app's own files
   * (settings, history), no for a path a person named (diagnostics, an export), where a missing
   * folder is a typo to report.
   */
  createFolder?: boolean;
}

/**
 * Checks that `path` can take an atomic write: a regular file, a symbolic link to one (the rename
 * replaces the link itself, never writing through it), a link to nothing, or a new name in a
 * folder that exists (or may be created). Throws UnusableTargetError otherwise.
 */
export async function checkAtomicTarget(
  path: string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  let own: Stats;
  try {
    own = await lstat(path);
  } catch (error) {
    if (!absent(error)) throw error;
    if (options.createFolder ?? true) return;
    const folder = await stat(dirname(path)).catch(() => undefined);
    if (!folder?.isDirectory()) throw new UnusableTargetError(path, 'missing');
    return;
  }
  const target = own.isSymbolicLink() ? await stat(path).catch(() => undefined) : own;
  const what = target && kindOf(target);
  if (what) throw new UnusableTargetError(path, what);
}

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old file or the new one,
 * never a torn mix: write a temporary file in the same folder (created exclusively: never through
 * a planted link), fsync it, rename it over the target (atomic on POSIX and on NTFS), then fsync the
 * folder so the rename itself is durable. The target must be a regular file or a new name
 * (checkAtomicTarget). Used for settings, call history, exports, diagnostics and the relay's state.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
  options: AtomicWriteOptions = {},
): Promise<void> {
  await checkAtomicTarget(path, options);
  const dir = dirname(path);
  if (options.createFolder ?? true) await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
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
