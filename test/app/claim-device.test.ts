/**
 * The computer's id for call claims (src-main/core/org/claim-device.ts): made once, kept in the
 * data folder across loads (restarts), a damaged or hostile file replaced with a log line, a folder
 * that cannot be written an id for this run and a log line, never a throw; the id never logged.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import {
  CLAIM_DEVICE_FILE,
  ClaimDeviceStore,
  NODE_CLAIM_DEVICE_FILES,
} from '../../src-main/core/org/claim-device.ts';
import { CLAIM_DEVICE_PATTERN } from '../../src-shared/relay/relay-protocol.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('claim-device-');

function storeIn(folder: string, logger = memoryLogger()) {
  return { store: new ClaimDeviceStore({ path: join(folder, CLAIM_DEVICE_FILE), logger }), logger };
}

const said = (logger: ReturnType<typeof memoryLogger>) =>
  logger.records.map((r) => `${r.level} ${r.msg}`);

describe('the computer’s id for call claims', () => {
  it('is made once (random, in the relay’s pattern), written to the data folder, and the same at the next load', async () => {
    const folder = join(tmp.path, 'userData');
    const first = storeIn(folder);
    const id = await first.store.load();
    expect(id).toMatch(CLAIM_DEVICE_PATTERN);
    expect(said(first.logger)).toEqual(['info the computer’s id for call claims is made and kept']);
    expect(JSON.parse(await readFile(join(folder, CLAIM_DEVICE_FILE), 'utf8'))).toEqual({
      v: 1,
      device: id,
    });
    // A restart: a new store on the same folder.
    const again = storeIn(folder);
    expect(await again.store.load()).toBe(id);
    expect(said(again.logger)).toEqual([]);
    // Another install (another folder) is another computer.
    expect(await storeIn(join(tmp.path, 'other')).store.load()).not.toBe(id);
    // Never in the log.
    expect(JSON.stringify([...first.logger.records, ...again.logger.records])).not.toContain(id);
  });

  it.each([
    ['not JSON', '{"v":1,"device":'],
    ['another shape', '["abcdefgh"]'],
    ['an id outside the pattern', JSON.stringify({ v: 1, device: 'short' })],
    ['an id with a newline', JSON.stringify({ v: 1, device: 'abcdefgh\nmallory' })],
    ['another version', JSON.stringify({ v: 2, device: 'abcdefghij' })],
    ['over 1 KiB', JSON.stringify({ v: 1, device: 'a'.repeat(2000) })],
  ])(
    'a file with %s is replaced by a new id, said in one line (without its content)',
    async (_, text) => {
      const folder = tmp.path;
      const path = join(folder, CLAIM_DEVICE_FILE);
      await writeFile(path, text);
      const { store, logger } = storeIn(folder);
      const id = await store.load();
      expect(id).toMatch(CLAIM_DEVICE_PATTERN);
      expect(said(logger)).toEqual([
        'warn the computer’s id for call claims was unusable; a new one replaces it',
      ]);
      expect(JSON.stringify(logger.records)).not.toContain('mallory');
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ v: 1, device: id });
      expect(await storeIn(folder).store.load()).toBe(id);
    },
  );

  it('a FIFO in the file’s place does not block the start: an id for this run, said in one line', async () => {
    if (process.platform === 'win32') return;
    const path = join(tmp.path, CLAIM_DEVICE_FILE);
    execFileSync('mkfifo', [path]);
    const { store, logger } = storeIn(tmp.path);
    const id = await store.load();
    expect(id).toMatch(CLAIM_DEVICE_PATTERN);
    expect(said(logger)).toEqual([
      'warn the computer’s id for call claims cannot be kept; this run uses its own (calls claimed before a restart are then claimed again as another computer)',
    ]);
    expect(logger.records[0]).toMatchObject({ why: 'unreadable (ENOTFILE)' });
  });

  it('a data folder that cannot be written: an id for this run and one log line, not a throw', async () => {
    // A regular file where the folder should be: no one can write under it, root included.
    const notAFolder = join(tmp.path, 'userData');
    await writeFile(notAFolder, 'a file');
    const { store, logger } = storeIn(notAFolder);
    const id = await store.load();
    expect(id).toMatch(CLAIM_DEVICE_PATTERN);
    expect(said(logger)).toEqual([
      'warn the computer’s id for call claims cannot be kept; this run uses its own (calls claimed before a restart are then claimed again as another computer)',
    ]);
    expect(JSON.stringify(logger.records)).not.toContain(id);
    // The same through the file access the store is given (a folder that refuses writes).
    const refusing = new ClaimDeviceStore({
      path: join(tmp.path, 'ro', CLAIM_DEVICE_FILE),
      logger,
      files: {
        read: NODE_CLAIM_DEVICE_FILES.read,
        write: () =>
          Promise.reject(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })),
      },
    });
    await expect(refusing.load()).resolves.toMatch(CLAIM_DEVICE_PATTERN);
  });

  it('a generator that gives something outside the pattern is not trusted: the real one is used', async () => {
    await mkdir(tmp.path, { recursive: true });
    const store = new ClaimDeviceStore({
      path: join(tmp.path, CLAIM_DEVICE_FILE),
      logger: memoryLogger(),
      newId: () => 'no',
    });
    expect(await store.load()).toMatch(CLAIM_DEVICE_PATTERN);
  });
});
