import { defineConfig } from 'vitest/config';

/**
 * Suites left out of `npm run test:fast` (README "Tests"), chosen by where they live so a new
 * slow suite lands in the right group: real SOAP clients (test/clients/), several processes,
 * clusters and crashes (test/scale/), and any suite named `*.slow.test.ts` (it starts server or
 * CLI processes, or loads benchmark-sized data). `npm test` runs both groups.
 */
const SLOW = ['test/clients/**/*.test.ts', 'test/scale/**/*.test.ts', 'test/**/*.slow.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The e2e and CLI tests start real processes; two cores are all we have.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: SLOW } },
      { extends: true, test: { name: 'slow', include: SLOW } },
    ],
  },
});
