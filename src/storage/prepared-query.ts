import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { MaybePromise } from '../shared/maybe-promise.js';
import type { Db, Tx } from './database.js';

type Slot = { readonly arg: number } | { readonly value: unknown };

/** A marker no real parameter value can equal. */
function sentinel(index: number): string {
  return `\u0000prepared-parameter-${index}\u0000`;
}

/**
 * A query built with Kysely once and re-run with new parameter values: the SQL is still written
 * once for both engines, but the per-call cost of building and compiling it is gone (building and
 * compiling were 13% of a lookup's CPU in the bench:json profile).
 *
 * `build` receives `p(i)`, a stand-in for argument i; every place it is used becomes a parameter.
 */
export class PreparedQuery<Row> {
  private readonly sql: string;
  private readonly slots: readonly Slot[];

  constructor(arity: number, build: (p: (index: number) => never) => Compilable<Row>) {
    const compiled = build((index) => sentinel(index) as never).compile();
    const markers = new Map(Array.from({ length: arity }, (_, i) => [sentinel(i), i] as const));
    this.sql = compiled.sql;
    this.slots = compiled.parameters.map((value) => {
      const arg = typeof value === 'string' ? markers.get(value) : undefined;
      return arg === undefined ? { value } : { arg };
    });
  }

  compile(args: readonly unknown[]): CompiledQuery<Row> {
    return CompiledQuery.raw(
      this.sql,
      this.slots.map((slot) => ('arg' in slot ? args[slot.arg] : slot.value)),
    );
  }

  /** Runs outside a transaction. */
  execute(db: Db, ...args: unknown[]): Promise<QueryResult<Row>> {
    return db.executeQuery(this.compile(args));
  }

  /** Runs inside a transaction (Storage.transaction); at once on SQLite (Tx.run). */
  run(tx: Tx, ...args: unknown[]): MaybePromise<QueryResult<Row>> {
    return tx.run(this.compile(args));
  }
}
