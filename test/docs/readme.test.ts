import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { buildProgram } from '../../src/cli/program.js';
import { Metrics } from '../../src/ops/metrics.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
const OPERATING = read('docs/operating.md');

/** The environment variables src/config.ts reads, found in its source so a new one cannot hide. */
function configVariables(): string[] {
  const source = read('src/config.ts');
  // Helpers take `(env, 'NAME', ...)`; direct reads are `env.NAME` or `env['NAME']`.
  const patterns = [/\(env, '([A-Z][A-Z0-9_]*)'/g, /\benv\.([A-Z][A-Z0-9_]*)\b/g, /\benv\['([A-Z][A-Z0-9_]*)'\]/g];
  return [...new Set(patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((m) => m[1] ?? '')))];
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
  it('documents every environment variable src/config.ts reads, and no other', () => {
    const read = configVariables();
    expect(read.length).toBeGreaterThan(10);
    const table = section(README, 'Configuration');
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...read].sort());
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
});
