import { sql, type Kysely, type Migration } from 'kysely';
import { identityColumn, type Engine } from '../engine.js';

/**
 * Several named API keys per account (issue 16). Each key is stored as its SHA-256 (api-key.ts);
 * `prefix` is the key's first characters, shown so an operator can tell keys apart. A key is live
 * while `revoked_at` is NULL and `expires_at` is NULL or in the future (a rolled key keeps working
 * until its grace period ends).
 *
 * Each account's single key moves into the new table (its prefix is unknown: only its hash was
 * kept), then `accounts.api_key_hash` is dropped so no code can verify against a stale copy.
 */
async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'integer', identityColumn(engine))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('expires_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();
  await sql`insert into api_keys (account_id, name, prefix, key_hash, created_at) select id, 'default', null, api_key_hash, created_at from accounts order by id`.execute(db);
  await db.schema.alterTable('accounts').dropColumn('api_key_hash').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('api_key_hash', 'text', (c) => c.notNull().defaultTo('')).execute();
  // The newest live key of each account becomes its only key again.
  await sql`update accounts set api_key_hash = coalesce((select k.key_hash from api_keys k where k.account_id = accounts.id and k.revoked_at is null order by k.id desc limit 1), '')`.execute(db);
  await db.schema.dropTable('api_keys').execute();
}

export function apiKeysMigration(engine: Engine): Migration {
  return { up: (db) => up(db, engine), down };
}
