import type { Kysely, Migration } from 'kysely';
import { identityColumn, type Engine } from '../engine.js';

/**
 * Import jobs started through the admin API and the console (issue 16 "import of JSON Lines
 * files", issue 18 "upload an import file with progress and its validation report"). One row per
 * uploaded file; the instance running it writes its progress here now and then (not per line), so
 * any instance behind a load balancer can report it.
 *
 * `heartbeat_at` is refreshed by the running instance every few seconds while the job is queued
 * or running; a job in one of those states whose heartbeat is older than the staleness limit was
 * left by an instance that died, and is marked failed (abandoned) by whichever instance next reads
 * the jobs (src/datasets/import/import-jobs.ts).
 *
 * `by_operation` and `invalid_lines` are JSON text on both engines, like records.document.
 */
async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('imports')
    .addColumn('id', 'integer', identityColumn(engine))
    // Who started it (the audit log's actor kind and name).
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('file_size', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('skip_invalid', 'integer', (c) => c.notNull())
    // queued | validating | importing | done | failed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('bytes_read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lines_read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('imported', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('invalid', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('committed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('by_operation', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('invalid_lines', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('error', 'text')
    // The instance (host:pid) that received the file and runs the job.
    .addColumn('instance', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('heartbeat_at', 'text', (c) => c.notNull())
    .execute();
  // The abandoned-job sweep reads the unfinished jobs only.
  await db.schema.createIndex('imports_state').on('imports').columns(['state', 'heartbeat_at']).execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('imports').execute();
}

export function importsMigration(engine: Engine): Migration {
  return { up: (db) => up(db, engine), down };
}
