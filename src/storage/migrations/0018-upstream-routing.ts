import type { Kysely, Migration } from 'kysely';

/**
 * Issue 32, several paid upstreams behind one router:
 *
 * - `ledger.source`: the source that answered a lookup (`store`, a register's name such as `dvla`,
 *   a paid upstream's name such as `regcheck`, or `cache` when an upstream's answer was served from
 *   the shared cache), on debit and free lookup rows; NULL on credit movements and on rows written
 *   before this migration. Nullable without a default, so the ADD COLUMN rewrites no row on either
 *   engine, and no index: it is read with the row, never searched.
 * - `upstream_states`: a paid upstream taken out for every instance, one row per provider: out of
 *   funds or quota (until `until`, or until a balance says otherwise when `until` is NULL), or
 *   disabled for refused credentials (until the operator fixes the key and restarts). Read before
 *   each call to that upstream (one primary-key read), written when an answer says so.
 * - `upstream_spend`: what the operator spent at each paid upstream per UTC day, in millionths of
 *   the currency (integers add exactly; a float sum of 0.1 + 0.2 would not), and the calls that
 *   cost it, added by every instance in one conditional upsert per call: the monthly budget and the
 *   console's spend figures are the same for every instance.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('source', 'text').execute();
  await db.schema
    .createTable('upstream_states')
    .addColumn('provider', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('until', 'text')
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('upstream_spend')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('spent_micros', 'bigint', (c) => c.notNull())
    .addColumn('calls', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('upstream_spend_pk', ['provider', 'day'])
    .execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upstream_spend').execute();
  await db.schema.dropTable('upstream_states').execute();
  await db.schema.alterTable('ledger').dropColumn('source').execute();
}

export const upstreamRoutingMigration: Migration = { up, down };
