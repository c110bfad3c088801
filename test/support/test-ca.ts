/** The test CA as a Vitest fixture: made before a file's tests, removed after them. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { makeTestCa, type TestCa } from '../../rigs/certs.ts';

/**
 * One test CA for the calling file (or describe block): made in a private folder before its tests
 * when `enabled`, the folder removed after them. Returns the CA's getter, for tests and hooks.
 */
export function useTestCa(prefix: string, enabled = true): () => TestCa {
  let dir: string | undefined;
  let ca: TestCa | undefined;
  beforeAll(() => {
    if (!enabled) return;
    dir = mkdtempSync(join(tmpdir(), prefix));
    ca = makeTestCa(dir);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!ca) throw new Error('useTestCa: the CA exists only while the tests run');
    return ca;
  };
}
