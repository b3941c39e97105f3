import type { Migration, MigrationProvider } from 'kysely';
import type { Engine } from '../engine.js';
import { initialMigration } from './0001-initial.js';

/** Migrations in order; names sort lexically, which is the order Kysely applies them. */
export function migrationProvider(engine: Engine): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '0001-initial': initialMigration(engine),
  };
  return { getMigrations: () => Promise.resolve(migrations) };
}
