import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import { isCursor } from '../../../src-shared/relay/relay-protocol.ts';

/** Where the relay source keeps its resume position between runs of the app. */
export interface CursorStore {
  load(): Promise<string | null>;
  save(cursor: string): Promise<void>;
}

/** A cursor in a small JSON file, written atomically; a missing or damaged file means "start live". */
export function fileCursorStore(path: string): CursorStore {
  return {
    async load() {
      try {
        const value = (JSON.parse(await readFile(path, 'utf8')) as { cursor?: unknown }).cursor;
        return typeof value === 'string' && isCursor(value) ? value : null;
      } catch {
        return null;
      }
    },
    save: (cursor) => writeFileAtomic(path, JSON.stringify({ cursor })),
  };
}
