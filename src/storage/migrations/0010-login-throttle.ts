import type { Kysely, Migration } from 'kysely';

/**
 * Failed logins counted in the store (issue 16), so that several instances on one database share
 * them when there is no Redis: one row per user name (`login:u:<name>`) or client address
 * (`login:a:<address>`) with the start of its window and the attempts counted in it
 * (StoreThrottleCounters). A row whose window ended is started again by the next attempt, and
 * pruned by the instances (the index on the window start).
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('login_throttle')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_throttle_window').on('login_throttle').column('window_started_at').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('login_throttle').execute();
}

export const loginThrottleMigration: Migration = { up, down };
