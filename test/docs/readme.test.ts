import { readdirSync, readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { buildProgram } from '../../src/cli/program.js';
import { EnvReader, readConfig } from '../../src/config/config.js';
import { Metrics } from '../../src/ops/metrics.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
const OPERATING = read('docs/operating.md');
/** Where every environment variable is documented: one table per area. */
const CONFIGURATION_DOC = 'docs/configuration.md';
/** Where every CLI command is documented. */
const CLI_DOC = 'docs/cli.md';

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
  ISRAEL_ENABLED: 'true',
  NHTSA_RATINGS_ENABLED: 'true',
  REGCHECK_USERNAME: 'regcheck-user',
  UKVD_API_KEY: 'ukvd-key',
  VINCARIO_API_KEY: 'vincario-key',
  VINCARIO_SECRET: 'vincario-secret',
  CARSXE_API_KEY: 'carsxe-key',
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

/** The variables docs/configuration.md documents: every backticked name in the first cell of a row of any of its tables. */
function documentedVariables(): string[] {
  const table = read(CONFIGURATION_DOC);
  return [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...(row[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? ''));
}

/** The section of a markdown document under a `## heading`, up to the next `## `. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The guides under docs/ (markdown), relative to the repository root. */
function guides(): string[] {
  return readdirSync(new URL('../../docs', import.meta.url)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
}

/** Every runnable command path of the CLI ("accounts create", "usage"...). */
function commandPaths(command: Command, prefix: readonly string[] = []): string[] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return sub.commands.length > 0 ? commandPaths(sub, path) : [path.join(' ')];
  });
}

describe('README and the reference it points to', () => {
  it('keeps README.md a front door: at most 300 lines, the reference in docs/', () => {
    expect(README.split('\n').length, 'README.md is over 300 lines: move reference material to a guide in docs/ and link it').toBeLessThanOrEqual(300);
  });

  it(`documents every environment variable the configuration reads in ${CONFIGURATION_DOC}, once, and no other`, () => {
    const readByCode = configVariables();
    expect(readByCode).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'REDIS_URL', 'DVSA_CLIENT_ID', 'NHTSA_BREAKER_OPEN_S', 'VIN_DB_PATH']));
    const documented = documentedVariables();
    const twice = documented.filter((name, i) => documented.indexOf(name) !== i);
    expect(twice, `variables with more than one row in ${CONFIGURATION_DOC}`).toEqual([]);
    const missing = readByCode.filter((name) => !documented.includes(name));
    const extra = documented.filter((name) => !readByCode.includes(name));
    expect(
      { missing, extra },
      `missing: read by the code but without a row in a table of ${CONFIGURATION_DOC} (add one to its area's table); extra: documented there but read nowhere`,
    ).toEqual({ missing: [], extra: [] });
  });

  it('reads the environment only through the configuration (src/config/config.ts), nowhere below it', () => {
    // The entry points hand process.env to loadConfig / runCli; everything else gets typed config.
    const allowed = new Set(['src/config/config.ts', 'src/cli/main.ts']);
    const readers = sourceFiles().filter((file) => !allowed.has(file) && /\bprocess\.env\b/.test(read(file)));
    expect(readers).toEqual([]);
  });

  it(`has a row in ${CLI_DOC} for every command of the vehicle-lookup program`, () => {
    const program = buildProgram({}, { out: () => undefined, err: () => undefined, progress: () => undefined, interactive: false });
    const paths = commandPaths(program);
    expect(paths).toContain('accounts create');
    const table = section(read(CLI_DOC), 'Commands');
    for (const path of paths) expect(table, `${CLI_DOC} "Commands" table lacks "${path}"`).toMatch(new RegExp(`^\\| \`${path}[ \`]`, 'm'));
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
    // vin-decoding.md names a table of the VIN database (vehicle_lookup_vin_meta), not a metric.
    for (const file of ['README.md', ...guides().filter((guide) => guide !== 'docs/vin-decoding.md')]) {
      const named = [...read(file).matchAll(/vehicle_lookup_[a-z_]*[a-z]\b(?!_\*)/g)].map((m) => m[0]);
      for (const name of named) expect(registered, `${file} names ${name}, which is not a registered metric`).toContain(name);
    }
    for (const name of own) expect(OPERATING, `docs/operating.md's metrics table lacks ${name}`).toContain(name);
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
    // Not project folders: installed packages, the default DATA_DIR, and the build's output (dist/).
    const projectFolders = list(root).filter((name) => name.endsWith('/') && !name.startsWith('.') && !name.startsWith('dist.building-') && !['node_modules/', 'data/', 'dist/'].includes(name));
    expect(rootEntries.sort()).toEqual(projectFolders.sort());
  });
});

