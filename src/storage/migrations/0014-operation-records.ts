import type { Kysely, Migration } from 'kysely';

/**
 * `operation_records`: records that answer one operation only (issue 24, record and replay).
 *
 * Operations that share a dataset (Check and CheckUKMinimal, CheckUSA and its three variants,
 * CheckAustralia and CheckAustraliaExtensive, CheckArgentina and CheckArgentinaExtensive) share the
 * records of `records`: one imported vehicle serves each of them, shaped by the operation's own
 * rules. An answer of the original service is not such a record: it is what the original sent for
 * one operation (a CheckUKMinimal answer holds six members, a Check answer all of them), and it is
 * served byte for byte, never reshaped. Stored under its dataset, one operation's answer would be
 * served for the other's request; here it is kept under its operation, and the local store reads
 * it before its dataset's record (RecordRepository.findAnswer).
 *
 * A new table rather than a column of `records`: that table's primary key (dataset, lookup_key) is
 * what every importer upserts on, and rebuilding it would rewrite every record of a large store
 * (an RDW import holds millions). Records of source `regcheck` imported before this migration stay
 * in `records` (served to every operation of their dataset as before); importing the recording
 * again puts them here.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('operation_records')
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('lookup_key', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('operation_records_pk', ['operation', 'lookup_key'])
    .execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('operation_records').execute();
}

export const operationRecordsMigration: Migration = { up, down };
