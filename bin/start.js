#!/usr/bin/env node
// `npm start`: runs the compiled service (dist/main.js), building it first when dist/ is missing
// or older than the sources, so `npm install && npm start` works on a fresh clone and never runs
// stale code. The service runs in this process (no wrapper), so signals reach it directly.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compiledIsCurrent, ROOT } from './compiled.js';

if (!compiledIsCurrent()) {
  console.error('vehicle-lookup: building dist/ first (npm run build)');
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.js')], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
await import(pathToFileURL(join(ROOT, 'dist', 'main.js')).href);
