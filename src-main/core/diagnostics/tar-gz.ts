/**
 * A .tar.gz of a few small text files, written with node's zlib and a plain ustar header: what
 * every OS opens (Windows 10+ `tar`, macOS Archive Utility, `tar -xzf`) without a new dependency.
 * Regular files only, names up to 100 bytes of ASCII.
 */
import { gzipSync } from 'node:zlib';

export interface TarFile {
  name: string;
  data: string;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtimeSec: number): Buffer {
  if (!/^[\x21-\x7e][\x20-\x7e]{0,99}$/.test(name) || name.includes('..'))
    throw new Error(`tar: unusable file name ${JSON.stringify(name)}`);
  const h = Buffer.alloc(BLOCK, 0);
  h.write(name, 0, 100, 'ascii');
  h.write(octal(0o600, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.max(0, Math.floor(mtimeSec)), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii'); // checksum counted as spaces
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

export function tarGz(files: readonly TarFile[], mtimeMs: number): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    const data = Buffer.from(file.data, 'utf8');
    parts.push(header(file.name, data.length, mtimeMs / 1000), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}
