import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { CostReport, InterfaceCost } from './lookup-cost.measure.js';

/**
 * The cost guard (issue 27): what one warm charged lookup costs on each interface, in counts that
 * do not depend on the machine (lookup-cost.measure.ts says how each is taken), against the
 * committed baseline lookup-cost.baseline.json. A change that adds a statement, a socket write or
 * a promise to a lookup, or grows its allocations beyond BYTES_TOLERANCE, fails here until the
 * baseline is updated in the same commit, so the cost of a feature shows in its diff:
 *
 *   UPDATE_COST_BASELINE=1 npx vitest run test/cost
 *
 * A change that removes work fails too (the baseline would hide the next regression behind the
 * gain): update the baseline the same way.
 */

const HERE = new URL('.', import.meta.url);
const BASELINE = fileURLToPath(new URL('lookup-cost.baseline.json', HERE));
const MEASURE = fileURLToPath(new URL('lookup-cost.measure.ts', HERE));
const ROOT = fileURLToPath(new URL('../..', HERE));
/** Allocations vary a little with the JIT's choices; counts do not vary at all. */
const BYTES_TOLERANCE = 0.15;
const UPDATE = 'UPDATE_COST_BASELINE=1 npx vitest run test/cost';

interface Baseline {
  readonly about: readonly string[];
  readonly node: string;
  readonly bytesTolerance: number;
  readonly interfaces: Readonly<Record<string, InterfaceCost & { readonly sqlCount: number }>>;
}

async function measure(): Promise<CostReport> {
  // --expose-gc: a clean heap before each batch; a young generation of 64 MB holds a batch's
  // allocations without a collection, so the heap's growth is what the batch allocated.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--max-semi-space-size=64', '--min-semi-space-size=64', '--import', 'tsx', MEASURE],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, COST_TRACE: '' } },
  );
  return JSON.parse(stdout) as CostReport;
}

function toBaseline(report: CostReport): Baseline {
  return {
    about: [
      'What one warm charged lookup costs on each interface (test/cost/lookup-cost.slow.test.ts, docs/benchmarks.md "Cost guard").',
      'sql: the statements SQLite runs for the answer, in order (one lookup at a time: a group commit of one debit);',
      'socketWrites: write/writev system calls for the answer; promises: async_hooks PROMISE inits;',
      `bytes: JavaScript heap allocated per answer (compared within bytesTolerance). Update: ${UPDATE}`,
    ],
    node: report.node,
    bytesTolerance: BYTES_TOLERANCE,
    interfaces: Object.fromEntries(Object.entries(report.interfaces).map(([name, cost]) => [name, { sqlCount: cost.sql.length, ...cost }])),
  };
}

/** What differs between the baseline and a measurement, one line each; empty when it matches. */
export function differences(baseline: Baseline, measured: CostReport): string[] {
  const lines: string[] = [];
  const names = new Set([...Object.keys(baseline.interfaces), ...Object.keys(measured.interfaces)]);
  for (const name of names) {
    const was = baseline.interfaces[name];
    const now = measured.interfaces[name];
    if (!was || !now) {
      lines.push(`${name}: ${was ? 'no longer measured' : 'not in the baseline'}`);
      continue;
    }
    const grew = (what: string, before: number, after: number): void => {
      if (after !== before) lines.push(`${name}: ${what} ${after > before ? 'grew' : 'shrank'} from ${before} to ${after} per answer`);
    };
    grew('SQL statements', was.sql.length, now.sql.length);
    if (was.sql.length === now.sql.length && was.sql.join('\n') !== now.sql.join('\n')) lines.push(`${name}: the SQL statements changed`);
    if (was.sql.join('\n') !== now.sql.join('\n')) {
      for (const sql of now.sql.filter((s) => !was.sql.includes(s))) lines.push(`    + ${sql}`);
      for (const sql of was.sql.filter((s) => !now.sql.includes(s))) lines.push(`    - ${sql}`);
    }
    grew('socket writes', was.socketWrites, now.socketWrites);
    grew('promises', was.promises, now.promises);
    const ratio = now.bytes / was.bytes;
    if (ratio > 1 + baseline.bytesTolerance || ratio < 1 - baseline.bytesTolerance) {
      lines.push(`${name}: bytes allocated ${ratio > 1 ? 'grew' : 'shrank'} from ${was.bytes} to ${now.bytes} per answer (${((ratio - 1) * 100).toFixed(0)}%, tolerance ±${baseline.bytesTolerance * 100}%)`);
    }
  }
  return lines;
}

describe('lookup cost guard', () => {
  it('costs what lookup-cost.baseline.json says, per warm charged answer on every interface', { timeout: 300_000 }, async () => {
    const measured = await measure();
    if (process.env.UPDATE_COST_BASELINE === '1') {
      writeFileSync(BASELINE, `${JSON.stringify(toBaseline(measured), null, 2)}\n`);
      return;
    }
    const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline;
    const lines = differences(baseline, measured);
    const node = measured.node.split('.')[0] === baseline.node.split('.')[0] ? '' : ` (baseline taken on Node ${baseline.node}, this is Node ${measured.node}: promise counts differ between majors)`;
    expect(
      lines,
      `a lookup's cost changed${node}:\n${lines.join('\n')}\nIf the change is meant, update the baseline in the same commit: ${UPDATE}`,
    ).toEqual([]);
  });
});
