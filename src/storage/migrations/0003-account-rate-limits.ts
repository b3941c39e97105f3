import type { Kysely, Migration } from 'kysely';

/**
 * Per-account rate limits (issue 5). NULL: the server default (RATE_LIMIT_PER_SECOND /
 * RATE_LIMIT_PER_DAY, unset = no limit); 0: no limit for this account, whatever the default;
 * N >= 1: at most N requests in each fixed window (one second; one UTC day).
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('rate_limit_per_second', 'integer').execute();
  await db.schema.alterTable('accounts').addColumn('rate_limit_per_day', 'integer').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('rate_limit_per_day').execute();
  await db.schema.alterTable('accounts').dropColumn('rate_limit_per_second').execute();
}

export const accountRateLimitsMigration: Migration = { up, down };
