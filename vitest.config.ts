import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    // A fresh npm install takes minutes: its own script, npm run test:install (vitest.install.config.ts).
    exclude: ['test/install/**', '**/node_modules/**'],
    // Integration tests open real sockets on 127.0.0.1 and may start redis or chromium; forks keep
    // each file's servers and native modules isolated.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
