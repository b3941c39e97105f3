import type { ColumnDefinitionBuilder } from 'kysely';

/** The storage engines. Each real difference between them is a named function in this file. */
export type Engine = 'sqlite' | 'postgres';

/** Auto-numbered primary key: SQLite's INTEGER PRIMARY KEY rowid alias, PostgreSQL's identity. */
export function identityColumn(engine: Engine): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return engine === 'sqlite'
    ? (c) => c.primaryKey().autoIncrement()
    : (c) => c.primaryKey().generatedByDefaultAsIdentity();
}
