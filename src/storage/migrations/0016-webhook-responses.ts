import type { Kysely, Migration } from 'kysely';

/**
 * The receiver's answer in the delivery log (issue 26 item 15): the first bytes of each attempt's
 * response body, as Stripe and Svix show them beside the status, so whoever set the endpoint up
 * sees what their server said ("invalid signature", a proxy's error page) without its logs. Null
 * when no answer came (a timeout, a refused connection) and for attempts logged before this column.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('response_body', 'text').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('response_body').execute();
}

export const webhookResponsesMigration: Migration = { up, down };
