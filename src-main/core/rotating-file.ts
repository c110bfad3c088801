import { closeSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * An append-only log file that never grows past `maxBytes`: when the next line would cross it, the
 * file becomes `<path>.1` (replacing the previous one) and a new file starts, so at most about
 * 2 x maxBytes stay on disk. Writes are synchronous: a crash loses no line that was logged before
 * it, and log volume here is a few lines per call. Any file-system error switches the sink off
 * (logging must never take the app down).
 */
export function rotatingFileSink(path: string, maxBytes = 5 * 1024 * 1024): (line: string) => void {
  let fd: number | null = null;
  let size = 0;
  const open = () => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    fd = openSync(path, 'a', 0o600);
    size = statSync(path).size;
  };
  const rotate = () => {
    if (fd !== null) closeSync(fd);
    fd = null;
    renameSync(path, `${path}.1`);
    open();
  };
  try {
    open();
  } catch {
    return () => {};
  }
  let broken = false;
  return (line) => {
    if (broken) return;
    try {
      const bytes = Buffer.byteLength(line);
      if (size > 0 && size + bytes > maxBytes) rotate();
      writeSync(fd!, line);
      size += bytes;
    } catch {
      broken = true;
    }
  };
}
