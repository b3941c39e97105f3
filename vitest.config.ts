import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The e2e and CLI tests start real processes; two cores are all we have.
    maxWorkers: 2,
  },
});
