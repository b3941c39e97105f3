import { sql, type Kysely, type Migration } from 'kysely';
import { identityColumn, type Engine } from '../engine.js';

/**
 * Issue 35: an Idempotency-Key's record refers to its answer instead of holding it.
 *
 * Every keyed lookup used to write its whole answer (about 1.5 KB of JSON) into its key's row: the
 * larger part of what a key added to a lookup's SQLite work. The answers now live in
 * `idempotency_results`, appended (integer ids, no index but the purge's), and a key's row holds
 * `result_id`. A lookup answered from a cached record gets the same frozen result object as every
 * other lookup of that record (LookupPipeline.shape), so one stored row serves all of them while
 * it is young enough (IdempotencyRepository: reused for half the retention, purged after twice
 * the retention, so it outlives every key that refers to it); any other answer is stored anew.
 *
 * The rows already kept move with their keys: each gets a results row with the key row's answer
 * and creation time, so a retry after the upgrade is still answered. `result_id` is NOT NULL with
 * a default of 0 (SQLite adds a NOT NULL column only with a default); every row written from here
 * on names its answer.
 */
async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('idempotency_results')
    .addColumn('id', 'integer', identityColumn(engine))
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('stored_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idempotency_results_stored').on('idempotency_results').column('stored_at').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('result_id', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // Number the kept rows, then copy each answer under its key's number.
  if (engine === 'sqlite') {
    await sql`update idempotency_keys set result_id = rowid`.execute(db);
  } else {
    await sql`update idempotency_keys k set result_id = n.rn
      from (select account_id, idempotency_key, row_number() over (order by created_at, account_id, idempotency_key) as rn from idempotency_keys) n
      where k.account_id = n.account_id and k.idempotency_key = n.idempotency_key`.execute(db);
  }
  await sql`insert into idempotency_results (id, result, stored_at) select result_id, result, created_at from idempotency_keys`.execute(db);
  if (engine === 'postgres') {
    await sql`select setval(pg_get_serial_sequence('idempotency_results', 'id'), coalesce(max(id), 0) + 1, false) from idempotency_results`.execute(db);
  }
  await db.schema.alterTable('idempotency_keys').dropColumn('result').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('result', 'text', (c) => c.notNull().defaultTo('')).execute();
  await sql`update idempotency_keys set result = coalesce((select r.result from idempotency_results r where r.id = idempotency_keys.result_id), '')`.execute(db);
  await db.schema.alterTable('idempotency_keys').dropColumn('result_id').execute();
  await db.schema.dropTable('idempotency_results').execute();
}

export function idempotencyResultsMigration(engine: Engine): Migration {
  return { up: (db) => up(db, engine), down };
}
