import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src-shared/atomic-file.ts';
import { useTempDir } from '../support/temp-dir.ts';

describe('writeFileAtomic', () => {
  const tmp = useTempDir('screenpop-atomic-');

  it('creates missing folders, replaces content and leaves no temporary file', async () => {
    const path = join(tmp.path, 'nested', 'settings.json');
    await writeFileAtomic(path, '{"a":1}');
    await writeFileAtomic(path, '{"a":2}');
    expect(await readFile(path, 'utf8')).toBe('{"a":2}');
    expect(await readdir(join(tmp.path, 'nested'))).toEqual(['settings.json']);
  });

  it('writes private files (0600) on POSIX', async () => {
    if (process.platform === 'win32') return;
    const path = join(tmp.path, 'history.json');
    await writeFileAtomic(path, '[]');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('keeps the old file whole when the write cannot complete', async () => {
    const path = join(tmp.path, 'state.json');
    await writeFileAtomic(path, 'old');
    // A folder where the target should be makes the rename fail after the temp file is written.
    const blocked = join(tmp.path, 'blocked');
    await writeFileAtomic(join(blocked, 'x'), 'x');
    await expect(writeFileAtomic(blocked, 'new')).rejects.toThrow();
    expect(await readFile(path, 'utf8')).toBe('old');
    expect((await readdir(tmp.path)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
