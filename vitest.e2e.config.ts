// The Electron end-to-end suite (npm run test:e2e): test/e2e/**/*.e2e.ts, one file and one app at
// a time, with the verbose reporter so that every skipped scenario shows its reason.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 300_000,
    reporters: ['verbose'],
  },
});
