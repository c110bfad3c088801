import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src-main/core/atomic-file.ts';

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'screenpop-atomic-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates missing folders, replaces content and leaves no temporary file', async () => {
    const path = join(dir, 'nested', 'settings.json');
    await writeFileAtomic(path, '{"a":1}');
    await writeFileAtomic(path, '{"a":2}');
    expect(await readFile(path, 'utf8')).toBe('{"a":2}');
    expect(await readdir(join(dir, 'nested'))).toEqual(['settings.json']);
  });

  it('writes private files (0600) on POSIX', async () => {
    if (process.platform === 'win32') return;
    const path = join(dir, 'history.json');
    await writeFileAtomic(path, '[]');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('keeps the old file whole when the write cannot complete', async () => {
    const path = join(dir, 'state.json');
    await writeFileAtomic(path, 'old');
    // A folder where the target should be makes the rename fail after the temp file is written.
    const blocked = join(dir, 'blocked');
    await writeFileAtomic(join(blocked, 'x'), 'x');
    await expect(writeFileAtomic(blocked, 'new')).rejects.toThrow();
    expect(await readFile(path, 'utf8')).toBe('old');
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
