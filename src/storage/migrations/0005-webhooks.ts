import { sql, type Kysely, type Migration } from 'kysely';
import { identityColumn, type Engine } from '../engine.js';

/**
 * Low-credit alerts and the signed webhooks that deliver them (issue 16).
 *
 * - `webhook_endpoints`: where events go. `account_id` NULL is an operator endpoint, told about
 *   every account. The secret is kept as given to the receiver (an HMAC key must be usable, not
 *   only comparable); during a rotation the previous one signs too until `previous_secret_until`.
 * - `webhook_messages`: the durable outbox, one row per event and endpoint. A sender claims rows
 *   by setting `lease_until` in the future (WebhookRepository.claimDue), so one instance delivers
 *   a message at a time.
 * - `webhook_deliveries`: one row per attempt (the delivery log).
 * - `credit_alert_settings`: an account's own thresholds (JSON array); no row = the server default.
 * - `credit_alert_fired`: a threshold that has fired and not yet re-armed; the primary key makes
 *   firing idempotent across instances and between the lookup path and the sweep.
 * - `credit_alert_cursor`: how far the sweep has read the ledger (one row, written by the first
 *   sweep at the end of the ledger: history from before alerts existed fires nothing; the migration
 *   writes no row, so a new store stays empty for migrate-store).
 */
async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  const id = identityColumn(engine);
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'integer', id)
    .addColumn('account_id', 'integer', (c) => c.references('accounts.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull().check(sql`created_by in ('account', 'operator')`))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').column('account_id').execute();

  await db.schema
    .createTable('webhook_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('account_id', 'integer')
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_until', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_messages_due').on('webhook_messages').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_messages_endpoint').on('webhook_messages').columns(['endpoint_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'integer', id)
    .addColumn('message_id', 'text', (c) => c.notNull().references('webhook_messages.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_message').on('webhook_deliveries').column('message_id').execute();

  await db.schema
    .createTable('credit_alert_settings')
    .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('thresholds', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('credit_alert_fired')
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('threshold', 'integer', (c) => c.notNull())
    .addColumn('fired_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('credit_alert_fired_pk', ['account_id', 'threshold'])
    .execute();

  await db.schema
    .createTable('credit_alert_cursor')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('ledger_id', 'integer', (c) => c.notNull())
    .execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['credit_alert_cursor', 'credit_alert_fired', 'credit_alert_settings', 'webhook_deliveries', 'webhook_messages', 'webhook_endpoints']) {
    await db.schema.dropTable(table).execute();
  }
}

export function webhooksMigration(engine: Engine): Migration {
  return { up: (db) => up(db, engine), down };
}
