import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: [
      'test/helpers/global-setup.ts',
      'packages/sdk/test/global-setup.ts',
      'test/helpers/console-setup.ts',
    ],
    // Each file gets its own database (cloned from a migrated template), so files run in parallel.
    pool: 'forks',
    // Two files at a time at least: Vitest's default (one less than the cores) ran them one by one
    // on a 2-core machine, where most files spend their time waiting on servers, child processes
    // and timers (the PostgreSQL run took 805 s with two against about 1,150 with one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
