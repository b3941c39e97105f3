import type { Tx } from './database.js';

/*
 * The two sides of a periodic rollup into the store (ops/lookup-rollup.ts runs it): what counts in
 * memory, and where the counts are added. They live below ops/ and providers/ because both count
 * (the lookup statistics, the upstream spend), and neither folder may import the other.
 */

/** Counts kept in memory until a rollup writes them: LookupCounts, and the upstream spend (upstream-spend.ts). */
export interface RollupCounts<Row> {
  /** Everything counted and not yet written, as rows; the counts are handed over. */
  take(): Row[];
  /** Takes back rows a write failed to store; answers how many counts it had to drop. */
  restore(rows: readonly Row[]): number;
}

/** Where a rollup adds its rows: an additive upsert, so every instance's counts add up. */
export interface RollupStore<Row> {
  add(tx: Tx, rows: readonly Row[]): Promise<void>;
}

