/**
 * How suites start the service as a process. From the sources through tsx by default, as a
 * checkout being edited runs; with `TEST_SERVER_ENTRY=dist`, the compiled `dist/main.js` that
 * `npm start` and the container image run (`npm run test:compiled` builds it first and runs the
 * process suites so), proving the build passes the same black-box tests.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const choice = process.env.TEST_SERVER_ENTRY ?? 'src';
if (choice !== 'src' && choice !== 'dist') throw new Error(`TEST_SERVER_ENTRY must be src or dist (got "${choice}")`);
if (choice === 'dist' && !existsSync(`${ROOT}dist/.build-stamp`)) throw new Error('TEST_SERVER_ENTRY=dist: run `npm run build` first (no dist/.build-stamp)');

/** `src` or `dist`. */
export const SERVER_ENTRY: 'src' | 'dist' = choice;

/**
 * Node's arguments to run the service, after `preload` (modules to `--import` first, TypeScript:
 * a test's fault injection). A preload patches the source modules, so a suite that needs one
 * runs the sources whatever TEST_SERVER_ENTRY says.
 */
export function serverArgs(preload: readonly string[] = []): string[] {
  if (SERVER_ENTRY === 'dist' && preload.length === 0) return ['dist/main.js'];
  return ['--import', 'tsx', ...preload.flatMap((file) => ['--import', file]), 'src/main.ts'];
}
