import { type Kysely, type Migration } from 'kysely';
import { identityColumn, type Engine } from '../engine.js';

/**
 * The admin and self-service API (issue 16): users (operators and customers), their server-side
 * sessions and invites, operator API tokens, the append-only audit log; a reference on ledger rows
 * (credits granted or removed by an operator) and accounts closed instead of deleted.
 *
 * Secrets (session ids, invite and operator tokens) are stored as SHA-256 hashes like API keys:
 * they are random, so a fast hash suffices; passwords are scrypt hashes (src/users/password.ts).
 */
async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  const id = identityColumn(engine);
  await db.schema
    .createTable('users')
    .addColumn('id', 'integer', id)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    // admin | viewer (operators, account_id NULL) or owner | member (customers of account_id).
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer', (c) => c.references('accounts.id'))
    .addColumn('password_hash', 'text')
    .addColumn('must_change_password', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_account').on('users').column('account_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('invites')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('invites_user').on('invites').column('user_id').execute();

  await db.schema
    .createTable('operator_tokens')
    .addColumn('id', 'integer', id)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'integer', id)
    .addColumn('at', 'text', (c) => c.notNull())
    // operator | customer | token | cli | system
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_kind', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    // JSON text on both engines, like records.document; never a secret (AuditLog.record).
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .execute();
  await db.schema.createIndex('audit_log_target').on('audit_log').columns(['target_kind', 'target', 'id']).execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();

  await db.schema.alterTable('ledger').addColumn('reference', 'text').execute();
  // Usage by day and operation (LedgerQueries.usage) reads only this index: the account's debits
  // in a time range, with what they cost, without touching the table.
  // The ledger pages newest first (LedgerQueries.rows): the account's rows by id, read backwards.
  await db.schema.createIndex('ledger_account_id').on('ledger').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('ledger_account_usage').on('ledger').columns(['account_id', 'kind', 'created_at', 'operation', 'delta']).execute();
  await db.schema.alterTable('accounts').addColumn('closed_at', 'text').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('closed_at').execute();
  await db.schema.dropIndex('ledger_account_usage').execute();
  await db.schema.dropIndex('ledger_account_id').execute();
  await db.schema.alterTable('ledger').dropColumn('reference').execute();
  for (const table of ['audit_log', 'operator_tokens', 'invites', 'sessions', 'users']) await db.schema.dropTable(table).execute();
}

export function adminMigration(engine: Engine): Migration {
  return { up: (db) => up(db, engine), down };
}
