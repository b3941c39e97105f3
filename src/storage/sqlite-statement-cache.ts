import type Database from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { noteLocalCommit } from './local-commits.js';

/** Most distinct SQL texts kept prepared; queries are built from a fixed set, so this is generous. */
const MAX_STATEMENTS = 500;

/**
 * A better-sqlite3 database for Kysely's SqliteDialect that prepares each SQL text once. Kysely's
 * driver calls `prepare()` for every query, and preparing cost a fifth of a lookup's CPU
 * (bench:json profile). Statements are reused only by exact SQL text; when the cache is full the
 * oldest entry is dropped.
 */
export function withStatementCache(db: Database.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(sql: string): SqliteStatement {
      const cached = cache.get(sql);
      if (cached) return cached;
      const statement = countingCommits(db, sql, db.prepare(sql));
      if (cache.size >= MAX_STATEMENTS) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

const COMMIT = /^\s*(?:commit|end)\b/i;

/**
 * The statement, reporting a commit (local-commits.ts) each time running it leaves data committed:
 * a COMMIT, or a write outside a transaction. Reads are returned as they are.
 */
function countingCommits(db: Database.Database, sql: string, statement: Database.Statement): SqliteStatement {
  // SQLite calls transaction control statements read-only, so COMMIT is recognised by its text.
  if (statement.readonly && !COMMIT.test(sql)) return statement;
  const counted = <T>(result: T): T => {
    if (!db.inTransaction) noteLocalCommit();
    return result;
  };
  return {
    reader: statement.reader,
    all: (parameters) => counted(statement.all(parameters)),
    run: (parameters) => counted(statement.run(parameters)),
    iterate: (parameters) => counted(statement.iterate(parameters)),
  };
}
