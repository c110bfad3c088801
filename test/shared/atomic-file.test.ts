import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkAtomicTarget,
  UnusableTargetError,
  writeFileAtomic,
} from '../../src-shared/files/atomic-file.ts';
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

/** Root may make a device node (the same one as /dev/null, 1:3) in a temporary folder. */
const canMknod = process.platform === 'linux' && process.getuid?.() === 0;
if (!canMknod)
  console.warn('atomic-file.test.ts: not root on Linux; the device-node cases are skipped');

describe('writeFileAtomic refuses what is not a regular file', () => {
  const tmp = useTempDir('screenpop-atomic-target-');

  async function refused(path: string, what: string, createFolder?: boolean): Promise<void> {
    const options = createFolder === undefined ? {} : { createFolder };
    const error = await writeFileAtomic(path, 'archive', 0o600, options).catch((e: unknown) => e);
    expect(error, path).toBeInstanceOf(UnusableTargetError);
    expect(error).toMatchObject({ path, what });
    await expect(checkAtomicTarget(path, options)).rejects.toMatchObject({ what });
    // Nothing was left behind in the folder.
    expect((await readdir(tmp.path)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  }

  it.runIf(canMknod)('a device node, and a link to one: the device stays a device', async () => {
    const device = join(tmp.path, 'null');
    execFileSync('mknod', [device, 'c', '1', '3']);
    await symlink(device, join(tmp.path, 'to-null'));
    await refused(device, 'device');
    await refused(join(tmp.path, 'to-null'), 'device');
    expect((await stat(device)).isCharacterDevice()).toBe(true);
  });

  it('a FIFO, a socket, a folder and links to them', async () => {
    const fifo = join(tmp.path, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const socketPath = join(tmp.path, 'sock');
    const server = net.createServer();
    await new Promise<void>((done) => server.listen(socketPath, done));
    try {
      await mkdir(join(tmp.path, 'folder'));
      await symlink(fifo, join(tmp.path, 'to-pipe'));
      await symlink(join(tmp.path, 'folder'), join(tmp.path, 'to-folder'));
      await refused(fifo, 'fifo');
      await refused(socketPath, 'socket');
      await refused(join(tmp.path, 'folder'), 'directory');
      await refused(join(tmp.path, 'to-pipe'), 'fifo');
      await refused(join(tmp.path, 'to-folder'), 'directory');
      expect((await stat(fifo)).isFIFO()).toBe(true);
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('a new name in a folder that does not exist, when folders are not to be created', async () => {
    await refused(join(tmp.path, 'typo', 'diag.tar.gz'), 'missing', false);
    await writeFile(join(tmp.path, 'file'), 'x');
    await refused(join(tmp.path, 'file', 'diag.tar.gz'), 'missing', false);
    await writeFileAtomic(join(tmp.path, 'new.tar.gz'), 'archive', 0o600, { createFolder: false });
    expect(await readFile(join(tmp.path, 'new.tar.gz'), 'utf8')).toBe('archive');
  });

  it('replaces a link to a regular file with the file, never writing through the link', async () => {
    const target = join(tmp.path, 'elsewhere.txt');
    await writeFile(target, 'not yours');
    const link = join(tmp.path, 'link.tar.gz');
    await symlink(target, link);
    await writeFileAtomic(link, 'archive');
    expect((await lstat(link)).isFile()).toBe(true);
    expect(await readFile(link, 'utf8')).toBe('archive');
    expect(await readFile(target, 'utf8')).toBe('not yours');
  });
});
