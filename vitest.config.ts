import { defineConfig } from 'vitest/config';

/**
 * The three groups of test suites (docs/testing.md), chosen by where a suite lives and how it is
 * named, so a new suite lands in the right group by its place:
 *
 * - `unit`: pure unit tests: codecs, config, VIN rules, XML, the catalogue, the docs held to the
 *   code. No server, no database, no child process, no network. A suite is a unit test when it
 *   lives in one of UNIT_FOLDERS or is named `*.unit.test.ts` beside what it tests;
 *   test/unit/unit-group.test.ts refuses one that imports a server, a store or a process.
 *   `npm run test:unit` runs them.
 * - `slow`: real SOAP clients (test/clients/), several processes, clusters and crashes
 *   (test/scale/), and any suite named `*.slow.test.ts` (it starts server, CLI or browser
 *   processes, or loads benchmark-sized data).
 * - `fast`: everything else, e.g. a whole app over Fastify's inject, on both engines.
 *
 * `npm run test:fast` runs `unit` and `fast` with TEST_ENGINES=sqlite (SQLite only: no
 * PostgreSQL, no Redis; test/helpers/engine-switch.ts); `npm test` and CI run all three groups on
 * both engines, with Redis and the browser.
 */
export const UNIT_FOLDERS = ['test/unit/', 'test/config/', 'test/docs/'] as const;
export const UNIT_SUFFIX = '.unit.test.ts';
export const SLOW_FOLDERS = ['test/clients/', 'test/scale/'] as const;
export const SLOW_SUFFIX = '.slow.test.ts';

const UNIT = [...UNIT_FOLDERS.map((folder) => `${folder}**/*.test.ts`), `test/**/*${UNIT_SUFFIX}`];
const SLOW = [...SLOW_FOLDERS.map((folder) => `${folder}**/*.test.ts`), `test/**/*${SLOW_SUFFIX}`];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The e2e and CLI tests start real processes; two cores are all we have.
    maxWorkers: 2,
    projects: [
      // Pure suites share one module cache per worker (no isolation: half the CPU of the group);
      // what a suite stubs is restored after each test, and unit-group.test.ts forbids vi.mock.
      { extends: true, test: { name: 'unit', include: UNIT, exclude: SLOW, isolate: false, unstubEnvs: true, unstubGlobals: true, restoreMocks: true } },
      { extends: true, test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...SLOW] } },
      { extends: true, test: { name: 'slow', include: SLOW } },
    ],
  },
});
