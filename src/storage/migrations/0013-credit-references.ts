import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Operators' credit grants and removals idempotent by reference (issue 23): one row per (account,
 * kind, reference) naming the ledger row it made, so a grant repeated with the reference of an
 * earlier one (a retried request, a double-clicked form) finds that row and answers its result
 * instead of granting again, as payment APIs do with idempotency keys. The primary key is what
 * holds when two instances take the same reference at once. A table of its own rather than a
 * unique index on the ledger: ledgers written before this migration may hold repeated references
 * already, and the ledger's history is not rewritten.
 *
 * The migration records the first row of each reference already in the ledger (repeats after it
 * stay as they were), and clears the empty references the console and the admin API wrote for a
 * grant without one (`''`, a sentinel that chose the ledger path without alert re-arming).
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('credit_references')
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('ledger_id', 'integer', (c) => c.notNull().references('ledger.id'))
    .addPrimaryKeyConstraint('credit_references_pk', ['account_id', 'kind', 'reference'])
    .execute();
  await sql`update ledger set reference = null where reference = ''`.execute(db);
  await sql`
    insert into credit_references (account_id, kind, reference, ledger_id)
    select account_id, kind, reference, min(id) from ledger
    where reference is not null and kind in ('topup', 'removal')
    group by account_id, kind, reference`.execute(db);
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('credit_references').execute();
}

export const creditReferencesMigration: Migration = { up, down };
