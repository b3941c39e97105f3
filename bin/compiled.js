// Whether dist/ (npm run build) is there and no older than the sources it was built from. The
// start script and the CLI run the compiled JavaScript when it is; a checkout being edited falls
// back to building (npm start) or to tsx (the CLI), so nobody runs yesterday's code by accident.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Written last by scripts/build.js: when the build began. */
export const STAMP = '.build-stamp';

function newestIn(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestIn(join(path, name)));
  return newest;
}

/**
 * True when dist/ holds a finished build that is up to date. Without src/ (an image or a package
 * that ships only dist/) there is nothing it could be stale against.
 */
export function compiledIsCurrent() {
  const stamp = join(ROOT, 'dist', STAMP);
  if (!existsSync(stamp)) return false;
  if (!existsSync(join(ROOT, 'src'))) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'].map((name) => join(ROOT, name)).filter((path) => existsSync(path));
  return inputs.every((path) => newestIn(path) <= built);
}
