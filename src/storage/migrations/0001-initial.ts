import { sql, type Kysely, type Migration } from 'kysely';
import { identityColumn, type Engine } from '../engine.js';

// Migrations take Kysely<unknown>: they describe the schema at their own point in time.
async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  const id = identityColumn(engine);
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'integer', id)
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('api_key_hash', 'text', (c) => c.notNull())
    .addColumn('credits', 'integer', (c) => c.notNull().defaultTo(0).check(sql`credits >= 0`))
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('require_api_key', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ledger')
    .addColumn('id', 'integer', id)
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('operation', 'text')
    .addColumn('interface', 'text')
    .addColumn('query', 'text')
    .addColumn('delta', 'integer', (c) => c.notNull())
    .addColumn('balance_after', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ledger_account_time').on('ledger').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('records')
    .addColumn('dataset', 'text', (c) => c.notNull())
    .addColumn('lookup_key', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('records_pk', ['dataset', 'lookup_key'])
    .execute();

  await db.schema
    .createTable('ncap_ratings')
    .addColumn('rating_key', 'text', (c) => c.primaryKey())
    .addColumn('make_norm', 'text', (c) => c.notNull())
    .addColumn('model_norm', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ncap_ratings_make').on('ncap_ratings').column('make_norm').execute();

  await db.schema
    .createTable('test_plates')
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('lookup_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('test_plates_pk', ['operation', 'lookup_key'])
    .execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['test_plates', 'ncap_ratings', 'records', 'ledger', 'accounts']) {
    await db.schema.dropTable(table).execute();
  }
}

export function initialMigration(engine: Engine): Migration {
  return { up: (db) => up(db, engine), down };
}
