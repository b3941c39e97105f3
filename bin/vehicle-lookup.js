#!/usr/bin/env node
// The CLI: the compiled program (dist/cli/main.js) when dist/ is current, as in the container
// image; otherwise the TypeScript through tsx, so the installed command and `npm run cli` are one
// program on a checkout being edited.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compiledIsCurrent, ROOT } from './compiled.js';

if (compiledIsCurrent()) {
  await import(pathToFileURL(join(ROOT, 'dist', 'cli', 'main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
