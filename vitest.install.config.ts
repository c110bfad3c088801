import { defineConfig } from 'vitest/config';

/**
 * npm run test:install: a fresh copy of the checkout installed as on a machine without libsecret
 * (test/install/). Slow (a whole npm install), so not part of npm test; .ci/run runs it.
 */
export default defineConfig({
  test: {
    include: ['test/install/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 16 * 60_000,
    reporters: ['verbose'],
  },
});
