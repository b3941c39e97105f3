import type { Kysely, Migration } from 'kysely';

/**
 * Idempotent retries (issue 17 item 3). One row per charged lookup that carried an
 * `Idempotency-Key`: the key is the client's, scoped to its account (two accounts may use the same
 * key), and the row is written in the transaction of the debit and its ledger row, so a retry after
 * the COMMIT (a crash, a dropped connection) finds it and is answered from `result` without a
 * second debit. `created_at` is ISO-8601 UTC text like every timestamp here; rows older than the
 * retention (IDEMPOTENCY_RETENTION_HOURS) are ignored, replaced by a new claim of their key, and
 * purged by the debit writer (IdempotencyRepository.purgeExpired).
 *
 * No unique index is added to ledger.request_id: stores copied from older versions (migrate-store
 * copies ledger rows with their ids) hold client-chosen duplicates, and a partial index on "rows
 * after the migration" has no predicate that survives such a copy on both engines. New rows carry
 * a request id we generate (a random UUID per request, src/app.ts), unique by construction.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('charged', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}

export const idempotencyKeysMigration: Migration = { up, down };
