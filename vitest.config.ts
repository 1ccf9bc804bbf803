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
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
