import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    // A fresh npm install takes minutes: its own script, npm run test:install (vitest.install.config.ts).
    exclude: ['test/install/**', '**/node_modules/**'],
    // Integration tests open real sockets on 127.0.0.1 and may start redis or chromium; forks keep
    // each file's servers and native modules isolated.
    pool: 'forks',
    // Two files at once even on two cores (Vitest's default there is one): most files spend their
    // time waiting on child processes, sockets and timers, not on the CPU. Measured on main at
    // ef2dad5 on this 2-core machine at load 13: 1,337 passed with two workers in 19 min of wall
    // time for 33 min of file time; the clean-clone CI decides the gain on a quiet machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
