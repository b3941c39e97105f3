import type { Kysely, Migration } from 'kysely';

/**
 * Free lookups in the ledger (issue 16: "each row says why it cost what it did"). A lookup of an
 * authenticated account that costs nothing (a test plate, a result its codec calls not chargeable,
 * an Idempotency-Key replay) writes a row of kind `free` with delta 0, and this column says which
 * of those it was (`FreeReason` in database.ts: test-plate, no-result, replay). NULL on every
 * other row.
 *
 * Why a kind of its own plus a reason column, rather than three kinds (`free-test-plate`...) or a
 * debit of 0: `kind` stays the one answer to "what did this row do to the balance" (debit, free,
 * top-up, removal), so a debit still always moves credits, the alert sweep and the balance checks
 * (balance = sum of deltas) read rows as before, and the ledger's filters and the usage query name
 * two kinds for "lookups" whatever reasons are added later. The reason is text like every other
 * enumeration in this schema, and nullable so the column costs existing rows nothing (an ADD
 * COLUMN without a default rewrites no row on either engine).
 *
 * No index changes: usage by day (LedgerQueries.usage) now reads `kind IN ('debit', 'free')`,
 * which ledger_account_usage (account_id, kind, created_at, operation, delta) still answers alone,
 * one index range per kind; the reason is not needed there. A new index would cost every charged
 * lookup's ledger insert, which this change must not slow down.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('free_reason', 'text').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger').dropColumn('free_reason').execute();
}

export const freeLookupsMigration: Migration = { up, down };
