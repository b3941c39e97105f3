import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Upstream spend and the operator's balance at a paid upstream (issue 24).
 *
 * - `upstream_stats`: lookups that asked an upstream provider (`found`, `not_found`, `failed`) and
 *   lookups its answer cache answered instead (`cache_found`, `cache_not_found`: the calls, and at
 *   the original the credits, it saved), per UTC day, provider and operation, summed over every
 *   instance: each counts in memory and adds its counts here with an upsert every
 *   LOOKUP_STATS_FLUSH_SECONDS (the rollup of migration 0011, src/ops/lookup-rollup.ts). The
 *   primary key is the upsert's conflict target; it leads with `day`, so the providers page's read
 *   (30 days) is one index range of at most 30 x providers x operations x outcomes rows, and needs
 *   no second index. `day` is `YYYY-MM-DD` text (UTC).
 * - `upstream_alert_marks`: which balance alert (`upstream.credits.low`, `.depleted`) has fired
 *   for a provider and not re-armed. Every instance reads the balance; the insert that wins the
 *   primary key is the one that sends the alert, so an alert goes out once however many instances
 *   see the crossing (as credit_alert_fired does for accounts).
 * - The operator's own webhook endpoints that subscribed to every event there was (the default
 *   when none are named) subscribe to the two new operator events too; endpoints that chose
 *   their events keep their choice.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upstream_stats')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('upstream_stats_pk', ['day', 'provider', 'operation', 'outcome'])
    .execute();
  await db.schema
    .createTable('upstream_alert_marks')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('credits', 'integer', (c) => c.notNull())
    .addColumn('fired_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('upstream_alert_marks_pk', ['provider', 'event'])
    .execute();
  await sql`update webhook_endpoints set events = ${'["credits.low","credits.depleted","upstream.credits.low","upstream.credits.depleted"]'}
            where account_id is null and events = ${'["credits.low","credits.depleted"]'}`.execute(db);
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upstream_alert_marks').execute();
  await db.schema.dropTable('upstream_stats').execute();
}

export const upstreamSpendMigration: Migration = { up, down };
