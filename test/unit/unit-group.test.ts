import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SLOW_SUFFIX, UNIT_FOLDERS, UNIT_SUFFIX } from '../../vitest.config.js';

/**
 * The `unit` group (`npm run test:unit`, vitest.config.ts) stays pure: a suite in it starts no
 * server, opens no store, spawns no process and talks to no network, so the group stays well under
 * a minute and needs no PostgreSQL, Redis or browser. It also runs without isolation between files
 * (one module cache per worker), so a unit suite may not replace modules (vi.mock).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Imports that mean a server, a store, a process, the network or a browser. */
const FORBIDDEN: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /^node:(child_process|cluster|net|http|https|http2|dgram|worker_threads)$/, why: 'processes or the network' },
  { pattern: /^(pg|ioredis|better-sqlite3|kysely|fastify|@fastify\/.*|playwright-core|soap|autocannon)$/, why: 'a store, a server or a client' },
  { pattern: /\/src\/(app|services|main|cluster)\.js$/, why: 'the whole app' },
  { pattern: /\/src\/storage\/create-database\.js$/, why: 'a store' },
  { pattern: /(^|\/)helpers\/(test-app|engines|ports|chromium)\.js$/, why: 'a test app, a store, ports or a browser' },
  { pattern: /(^|\/)fakes\//, why: 'fake upstream servers' },
  { pattern: /harness\.js$/, why: 'a harness of a server or store suite' },
];

function testFiles(dir = 'test'): string[] {
  return readdirSync(`${ROOT}${dir}`, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(`${dir}/${entry.name}`) : entry.name.endsWith('.test.ts') ? [`${dir}/${entry.name}`] : [],
  );
}

/** The suites of the unit group, chosen by the same rule as vitest.config.ts. */
export function unitSuites(files: readonly string[]): string[] {
  return files.filter((file) => !file.endsWith(SLOW_SUFFIX) && (file.endsWith(UNIT_SUFFIX) || UNIT_FOLDERS.some((folder) => file.startsWith(folder))));
}

/** The value imports of a source text (type-only imports load nothing). */
export function valueImports(source: string): string[] {
  const statics = [...source.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1] ?? '');
  const bare = [...source.matchAll(/^import\s+'([^']+)'/gm)].map((m) => m[1] ?? '');
  const dynamic = [...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1] ?? '');
  return [...statics, ...bare, ...dynamic];
}

function problemsOf(file: string): string[] {
  const source = readFileSync(`${ROOT}${file}`, 'utf8');
  const imports = valueImports(source).flatMap((specifier) => {
    const rule = FORBIDDEN.find(({ pattern }) => pattern.test(specifier));
    return rule ? [`imports ${specifier} (${rule.why})`] : [];
  });
  const mocks = /\bvi\.(mock|doMock)\(/.test(source) ? ['replaces a module with vi.mock (the unit group shares one module cache per worker)'] : [];
  return [...imports, ...mocks];
}

describe('the unit group', () => {
  it('finds its suites by folder and name, as vitest.config.ts does', () => {
    expect(unitSuites(['test/unit/a.test.ts', 'test/config/b.test.ts', 'test/vin/c.unit.test.ts', 'test/e2e/d.test.ts', 'test/docs/e.slow.test.ts'])).toEqual([
      'test/unit/a.test.ts',
      'test/config/b.test.ts',
      'test/vin/c.unit.test.ts',
    ]);
    expect(unitSuites(testFiles())).toContain('test/unit/unit-group.test.ts');
  });

  it('reads value imports and ignores type-only ones', () => {
    // Built from pieces, so this file's own source holds no such import.
    const dynamic = ['await import', "('ioredis');"].join('');
    const source = `import type { Storage } from '../../src/storage/create-database.js';\nimport {\n  a,\n} from 'pg';\nimport 'node:net';\n${dynamic}\n`;
    expect(valueImports(source)).toEqual(['pg', 'node:net', 'ioredis']);
  });

  it('holds no suite that starts a server, opens a store, spawns a process or mocks a module', () => {
    const found = Object.fromEntries(unitSuites(testFiles()).flatMap((file) => {
      const problems = problemsOf(file);
      return problems.length > 0 ? [[file, problems] as const] : [];
    }));
    expect(found, 'a unit suite (test/unit/, test/config/, test/docs/ or *.unit.test.ts) must stay pure: move it to its area as *.test.ts').toEqual({});
  });
});
