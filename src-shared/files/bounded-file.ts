/**
 * Reading a file whose path someone else chose (the policy, a CA file, settings, history): only a
 * regular file, and only up to a size. A FIFO or `/dev/stdin` in its place would block the read
 * for ever (the app's start-up with it), a device such as /dev/zero would never end, and a file of
 * many megabytes would cost memory and a log line per bad part. The file is opened without
 * blocking (O_NONBLOCK: opening a FIFO with no writer returns at once), judged by what the opened
 * descriptor is (fstat: no race with a swap after a check), and read to at most `maxBytes` + 1.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

export type FileShape = 'not-a-file' | 'too-large';

/** The path names a FIFO, a device, a folder or a socket, or a file larger than allowed. */
export class FileShapeError extends Error {
  readonly path: string;
  readonly shape: FileShape;
  readonly maxBytes: number;

  constructor(path: string, shape: FileShape, maxBytes: number) {
    super(
      shape === 'not-a-file'
        ? `${path} is not a regular file (a FIFO, a device or a folder)`
        : `${path} is larger than ${maxBytes} bytes`,
    );
    this.name = 'FileShapeError';
    this.path = path;
    this.shape = shape;
    this.maxBytes = maxBytes;
    // Like an fs error, for callers that switch on `code`.
    (this as { code?: string }).code = shape === 'not-a-file' ? 'ENOTFILE' : 'EFBIG';
  }
}

/** Read-only, and not blocking on a FIFO (where the platform has O_NONBLOCK). */
const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The regular file at `path`, at most `maxBytes` long. Rejects with FileShapeError or fs's error.
 * `opened` is given the opened file's status (who owns it, its mode: policy-trust.ts).
 */
export async function readBoundedFile(
  path: string,
  maxBytes: number,
  opened?: (info: Stats) => void,
): Promise<Buffer> {
  const handle = await open(path, FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new FileShapeError(path, 'not-a-file', maxBytes);
    opened?.(info);
    if (info.size > maxBytes) throw new FileShapeError(path, 'too-large', maxBytes);
    // The size may have changed since fstat: read one byte more than allowed to know.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw new FileShapeError(path, 'too-large', maxBytes);
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/** The same, synchronously (for files read while building something synchronous: CA files). */
export function readBoundedFileSync(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, FLAGS);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new FileShapeError(path, 'not-a-file', maxBytes);
    if (info.size > maxBytes) throw new FileShapeError(path, 'too-large', maxBytes);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw new FileShapeError(path, 'too-large', maxBytes);
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}
