#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so the installed command and `npm run cli` are one program.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
