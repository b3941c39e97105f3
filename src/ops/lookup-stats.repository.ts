import type { Db, Tx } from '../storage/database.js';

/** Lookups of one hour, interface, operation and outcome (a lookup_stats row, or counts to add to one). */
export interface LookupStatRow {
  /** The hour's start, ISO-8601 UTC. */
  readonly hour: string;
  readonly interface: string;
  readonly operation: string;
  /** `success` or the error code in lower case (`not_found`), as vehicle_lookup_lookups_total labels it. */
  readonly outcome: string;
  readonly count: number;
}

/** What the overview and `GET /admin/api/lookup-stats` show per interface. */
export interface InterfaceStats {
  readonly interface: string;
  readonly total: number;
  readonly successes: number;
  /** Failed lookups by outcome (the error code in lower case), largest first. */
  readonly errors: Readonly<Record<string, number>>;
  /** successes / total; null without lookups. */
  readonly successRate: number | null;
}

/** Rows per INSERT: 5 parameters each, well under SQLite's 32,766 and PostgreSQL's 65,535. */
const CHUNK = 1000;

/** Per-interface totals from rows of any hours and operations (pure: the API and the page share it). */
export function summariseByInterface(rows: ReadonlyArray<Pick<LookupStatRow, 'interface' | 'outcome' | 'count'>>): InterfaceStats[] {
  const by = new Map<string, { total: number; successes: number; errors: Map<string, number> }>();
  for (const row of rows) {
    let entry = by.get(row.interface);
    if (!entry) {
      entry = { total: 0, successes: 0, errors: new Map() };
      by.set(row.interface, entry);
    }
    entry.total += row.count;
    if (row.outcome === 'success') entry.successes += row.count;
    else entry.errors.set(row.outcome, (entry.errors.get(row.outcome) ?? 0) + row.count);
  }
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, e]) => ({
      interface: name,
      total: e.total,
      successes: e.successes,
      errors: Object.fromEntries([...e.errors.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))),
      successRate: e.total === 0 ? null : e.successes / e.total,
    }));
}

/** The store side of the lookup rollup (migration 0011): every instance adds, anyone reads the sums. */
export class LookupStatsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds counts to the rows of their hour, interface, operation and outcome (an additive upsert:
   * instances flushing at once both count). Rows go in key order, so two instances updating the
   * same rows take PostgreSQL's row locks in the same order and cannot deadlock.
   */
  async add(tx: Tx, rows: readonly LookupStatRow[]): Promise<void> {
    const sorted = [...rows].sort((a, b) => a.hour.localeCompare(b.hour) || a.interface.localeCompare(b.interface) || a.operation.localeCompare(b.operation) || a.outcome.localeCompare(b.outcome));
    for (let i = 0; i < sorted.length; i += CHUNK) {
      await tx.db
        .insertInto('lookup_stats')
        .values(sorted.slice(i, i + CHUNK).map((r) => ({ hour: r.hour, interface: r.interface, operation: r.operation, outcome: r.outcome, count: r.count })))
        .onConflict((oc) => oc.columns(['hour', 'interface', 'operation', 'outcome']).doUpdateSet((eb) => ({ count: eb('lookup_stats.count', '+', eb.ref('excluded.count')) })))
        .execute();
    }
  }

  /** Lookups by interface and outcome over the hours starting in [from, to), every instance summed. */
  async byInterface(from: string, to: string): Promise<InterfaceStats[]> {
    const rows = await this.db
      .selectFrom('lookup_stats')
      .select(['interface', 'outcome', (eb) => eb.fn.sum<number | string>('count').as('count')])
      .where('hour', '>=', from)
      .where('hour', '<', to)
      .groupBy(['interface', 'outcome'])
      .execute();
    return summariseByInterface(rows.map((r) => ({ interface: r.interface, outcome: r.outcome, count: Number(r.count) })));
  }
}
