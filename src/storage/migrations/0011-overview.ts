import type { Kysely, Migration } from 'kysely';

/**
 * The operator overview (issues 16 and 18).
 *
 * - `ledger_kind_usage`: usage over all accounts by day and operation (LedgerQueries.usage without
 *   an account) reads only this index: the debits of a time range with what they cost, without
 *   touching the table. The per-account query keeps `ledger_account_usage` (migration 0007), which
 *   leads with the account. test/storage/usage-aggregates.test.ts asserts both plans on both
 *   engines; docs/benchmarks.md has the measurement (bench:usage).
 * - `lookup_stats`: finished lookups per UTC hour, interface, operation and outcome (`success` or
 *   the error code, as the `vehicle_lookup_lookups_total` metric labels them), summed over every
 *   instance: each one counts in memory and adds its counts here every LOOKUP_STATS_FLUSH_SECONDS
 *   (src/ops/lookup-rollup.ts). The primary key is the upsert's conflict target and serves the
 *   range read by hour. `hour` is ISO-8601 UTC text like every timestamp here.
 *
 * No index on accounts.credits for "accounts close to zero": every debit updates that column, and
 * an index on it would add a B-tree write to each one, while the overview's scan of the accounts
 * table is cheap at the sizes an operator pages through (bench:usage measures it).
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('ledger_kind_usage').on('ledger').columns(['kind', 'created_at', 'operation', 'delta']).execute();
  await db.schema
    .createTable('lookup_stats')
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('interface', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('lookup_stats_pk', ['hour', 'interface', 'operation', 'outcome'])
    .execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('lookup_stats').execute();
  await db.schema.dropIndex('ledger_kind_usage').execute();
}

export const overviewMigration: Migration = { up, down };
