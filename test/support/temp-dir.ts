import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/**
 * A fresh private folder for each test of the calling file or describe block, removed afterwards.
 * Call at the top level of a file or inside describe(); read `.path` inside tests and hooks.
 */
export function useTempDir(prefix: string): { readonly path: string } {
  let current: string | undefined;
  beforeEach(async () => {
    current = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    if (current) await rm(current, { recursive: true, force: true });
    current = undefined;
  });
  return {
    get path(): string {
      if (!current) throw new Error('useTempDir: the folder exists only while a test runs');
      return current;
    },
  };
}
