import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rotatingFileSink } from '../../src-main/core/rotating-file.ts';
import { useTempDir } from '../support/temp-dir.ts';

describe('rotatingFileSink', () => {
  const tmp = useTempDir('screenpop-log-');

  it('appends, then rotates to .1 before a line would cross the limit, keeping one old file', async () => {
    const path = join(tmp.path, 'logs', 'app.log');
    const write = rotatingFileSink(path, 100);
    const line = (n: number) => `${String(n).padStart(2, '0')}${'x'.repeat(37)}\n`; // 40 bytes
    for (let i = 1; i <= 7; i++) write(line(i));
    // Two 40-byte lines fit in 100; the third rotates: [1,2] [3,4] [5,6] [7].
    expect(await readFile(path, 'utf8')).toBe(line(7));
    expect(await readFile(`${path}.1`, 'utf8')).toBe(line(5) + line(6));
    expect((await stat(path)).size).toBeLessThanOrEqual(100);
  });

  it('continues an existing file and counts its size', async () => {
    const path = join(tmp.path, 'app.log');
    await writeFile(path, 'a'.repeat(90));
    const write = rotatingFileSink(path, 100);
    write('b'.repeat(20));
    expect(await readFile(`${path}.1`, 'utf8')).toBe('a'.repeat(90));
    expect(await readFile(path, 'utf8')).toBe('b'.repeat(20));
  });

  it('never throws when the file cannot be opened', async () => {
    const notADir = join(tmp.path, 'plain-file');
    await writeFile(notADir, '');
    const write = rotatingFileSink(join(notADir, 'app.log'));
    expect(() => write('line\n')).not.toThrow();
  });
});
