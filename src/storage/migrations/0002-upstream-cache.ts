import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Answers of upstream providers (DVLA, DVSA...), shared by every instance using the store
 * (issue 4). The payload is the upstream's JSON body as text on both engines, like
 * records.document, so one query serves both; `expires_at` is ISO-8601 UTC text, which compares
 * correctly as text.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upstream_cache')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('lookup_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('found', 'not-found')`))
    .addColumn('payload', 'text')
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('upstream_cache_pk', ['provider', 'lookup_key'])
    .execute();
  await db.schema.createIndex('upstream_cache_expiry').on('upstream_cache').column('expires_at').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upstream_cache').execute();
}

export const upstreamCacheMigration: Migration = { up, down };
