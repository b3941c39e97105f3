import type { ColumnDefinitionBuilder } from 'kysely';

/**
 * The storage engines. Each real difference between them is a named capability of Storage
 * (create-database.ts), or, for the schema, a named function in this file.
 */
export type Engine = 'sqlite' | 'postgres';

/**
 * Auto-numbered primary key: SQLite's INTEGER PRIMARY KEY rowid alias, PostgreSQL's identity.
 * Not SQLite's AUTOINCREMENT: it updates sqlite_sequence on every insert (2 of the 6 µs a ledger
 * row cost), and it only differs in never reusing the id of a deleted last row, while these
 * tables (accounts, the append-only ledger) never delete rows.
 */
export function identityColumn(engine: Engine): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return engine === 'sqlite' ? (c) => c.primaryKey() : (c) => c.primaryKey().generatedByDefaultAsIdentity();
}
