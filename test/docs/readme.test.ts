import { readdirSync, readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { buildProgram } from '../../src/cli/program.js';
import { EnvReader, readConfig } from '../../src/config.js';
import { Metrics } from '../../src/ops/metrics.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
const OPERATING = read('docs/operating.md');

/** Turns every upstream provider on, so the configuration reads each provider's own settings too. */
const EVERY_PROVIDER_ON = {
  DVLA_API_KEY: 'dvla-key',
  DVSA_CLIENT_ID: 'id',
  DVSA_CLIENT_SECRET: 'secret',
  DVSA_API_KEY: 'dvsa-key',
  DVSA_TOKEN_URL: 'https://login.example/token',
  RDW_ENABLED: 'true',
  NHTSA_ONLINE: 'true',
  NHTSA_RECALLS_ENABLED: 'true',
  CANADA_SPECS_ENABLED: 'true',
  VEGVESEN_API_KEY: 'svv-key',
  REGCHECK_USERNAME: 'regcheck-user',
};

/** The source files under src/, relative to the repository root. */
function sourceFiles(dir = 'src'): string[] {
  return readdirSync(new URL(`../../${dir}`, import.meta.url), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(`${dir}/${entry.name}`) : /\.[cm]?[jt]s$/.test(entry.name) ? [`${dir}/${entry.name}`] : [],
  );
}

/**
 * Every environment variable the service reads: the names the whole configuration asks its
 * EnvReader for with every provider on, plus every name written literally in a reader call
 * anywhere in src/ (so a variable read only on a path this environment does not take still counts).
 * Helpers taking `(env, 'NAME', ...)` count when NAME has an underscore (a prefix such as 'DVLA'
 * handed to readUpstreamSettings has none).
 */
function configVariables(): string[] {
  const reader = new EnvReader(EVERY_PROVIDER_ON);
  readConfig(reader);
  const literal = sourceFiles().flatMap((file) =>
    [...read(file).matchAll(/\benv\.(?:text|bool|int|optionalInt|oneOf|matching|url|urlOr|headerSecret|intList|durationList)\(\s*'([A-Z][A-Z0-9_]*)'|\(env, '([A-Z][A-Z0-9]*_[A-Z0-9_]*)'/g)].map((m) => m[1] ?? m[2] ?? ''),
  );
  return [...new Set([...reader.names, ...literal])];
}

/** The variables the README's configuration table documents: every backticked name in a row's first cell. */
function documentedVariables(): string[] {
  const table = section(README, 'Configuration');
  return [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...(row[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? ''));
}

/** The section of a markdown document under a `## heading`, up to the next `## `. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** Every runnable command path of the CLI ("accounts create", "usage"...). */
function commandPaths(command: Command, prefix: readonly string[] = []): string[] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return sub.commands.length > 0 ? commandPaths(sub, path) : [path.join(' ')];
  });
}

describe('README', () => {
  it('documents every environment variable the configuration reads in its one table, and no other', () => {
    const readByCode = configVariables();
    expect(readByCode).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'REDIS_URL', 'DVSA_CLIENT_ID', 'NHTSA_BREAKER_OPEN_S', 'VIN_DB_PATH']));
    const documented = documentedVariables();
    expect(documented.length, 'each variable once').toBe(new Set(documented).size);
    const missing = readByCode.filter((name) => !documented.includes(name));
    const extra = documented.filter((name) => !readByCode.includes(name));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it('reads the environment only through the configuration (src/config.ts), nowhere below it', () => {
    // The entry points hand process.env to loadConfig / runCli; everything else gets typed config.
    const allowed = new Set(['src/config.ts', 'src/cli/main.ts']);
    const readers = sourceFiles().filter((file) => !allowed.has(file) && /\bprocess\.env\b/.test(read(file)));
    expect(readers).toEqual([]);
  });

  it('has a CLI table row for every command of the vehicle-lookup program', () => {
    const program = buildProgram({}, { out: () => undefined, err: () => undefined, progress: () => undefined, interactive: false });
    const paths = commandPaths(program);
    expect(paths).toContain('accounts create');
    const table = section(README, 'CLI');
    for (const path of paths) expect(table, `README CLI table lacks "${path}"`).toMatch(new RegExp(`^\\| \`${path}[ \`]`, 'm'));
  });

  it('names every catalogue operation in the operations summary and states their number', () => {
    const summary = section(README, 'Operations');
    for (const op of OPERATIONS) expect(summary, `README lacks ${op.name}`).toContain(`\`${op.name}\``);
    expect(summary).toContain(`${OPERATIONS.length} operations`);
    expect(summary).toContain('(docs/operations.md)');
  });

  it('names only metrics the service registers, and every metric of its own', () => {
    const registered = new Metrics().registry.getMetricsAsArray().map((m) => m.name);
    const defaults = new Registry();
    collectDefaultMetrics({ register: defaults, prefix: 'vehicle_lookup_' });
    const defaultNames = new Set(defaults.getMetricsAsArray().map((m) => m.name));
    const own = registered.filter((name) => !defaultNames.has(name));
    expect(own.length).toBeGreaterThan(0);
    for (const doc of [README, OPERATING]) {
      const named = [...doc.matchAll(/vehicle_lookup_[a-z_]*[a-z]\b(?!_\*)/g)].map((m) => m[0]);
      for (const name of named) expect(registered, `${name} is not a registered metric`).toContain(name);
      for (const name of own) expect(doc).toContain(name);
    }
  });

  it('the Layout section names every folder and top-level file of src/ and every project folder, and nothing that is gone', () => {
    const block = /```\n(src\/[\s\S]*?)```/.exec(section(README, 'Layout'))?.[1] ?? '';
    // "  name/ ..." under src/, "name/ ..." at the root; continuation lines start with more spaces.
    const srcEntries = [...block.matchAll(/^ {2}([a-z][\w.-]*\/?)/gm)].map((m) => m[1] ?? '');
    const rootEntries = [...block.matchAll(/^([a-z][\w.-]*\/)/gm)].map((m) => m[1] ?? '');
    const root = new URL('../../', import.meta.url);
    const list = (dir: URL): string[] => readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    const src = list(new URL('src/', root)).filter((name) => name.endsWith('/') || name.endsWith('.ts'));
    expect(srcEntries.sort()).toEqual(src.sort());
    const projectFolders = list(root).filter((name) => name.endsWith('/') && !name.startsWith('.') && !['node_modules/', 'data/'].includes(name));
    expect(rootEntries.sort()).toEqual(projectFolders.sort());
  });
});

