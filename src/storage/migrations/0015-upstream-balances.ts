import type { Kysely, Migration } from 'kysely';

/**
 * `upstream_balances`: the operator's balance at a paid upstream (the original service), one row
 * per provider, shared by every instance on the store (issue 24). Each instance writes what it
 * reads from the upstream (`credits`, `read_at`), counts it down by one with a conditional update
 * after each answer the upstream charged, and reads it before asking the upstream and before
 * showing it: every instance gates on and shows the same figure, whichever of them read or spent it.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upstream_balances')
    .addColumn('provider', 'text', (c) => c.primaryKey())
    .addColumn('credits', 'integer', (c) => c.notNull())
    .addColumn('read_at', 'text', (c) => c.notNull())
    .execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upstream_balances').execute();
}

export const upstreamBalancesMigration: Migration = { up, down };
