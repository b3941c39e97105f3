#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ (tsconfig.build.json) and copies the files the modules
// read beside themselves (the console's assets, the API docs page's script and style), so
// `node dist/main.js` runs with neither tsx nor TypeScript. Builds into a temporary directory and
// swaps it in, so a process starting meanwhile never sees half a dist/.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP } from '../bin/compiled.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const out = join(root, `dist.building-${process.pid}`);
const started = Date.now();

rmSync(out, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
if (compiled.status !== 0) {
  rmSync(out, { recursive: true, force: true });
  console.error('npm run build: the TypeScript compiler failed (above)');
  process.exit(compiled.status ?? 1);
}

/** Every file under src/ that is not TypeScript goes to the same place under dist/. */
function copyAssets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(path);
    else if (!entry.name.endsWith('.ts')) {
      const target = join(out, relative(src, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
copyAssets(src);
// The start time, not the end: a source edited while the compiler ran makes dist/ stale.
writeFileSync(join(out, STAMP), `${new Date(started).toISOString()}\n`);
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
renameSync(out, dist);
console.log(`npm run build: dist/ ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
