import type { Selectable } from 'kysely';
import type { Storage } from '../storage/create-database.js';
import type { IdempotencyKeysTable, Tx } from '../storage/database.js';
import { andThen, type MaybePromise } from '../shared/maybe-promise.js';
import { PreparedQuery } from '../storage/prepared-query.js';

/** A charged lookup's record under its account's Idempotency-Key (table idempotency_keys, migration 0006). */
export interface IdempotencyRecord {
  readonly key: string;
  /** The operation and query as the ledger writes them (a reuse of the key must match both). */
  readonly operation: string;
  readonly query: string;
  /** The LookupResult paid for, as JSON text. */
  readonly result: string;
  readonly charged: number;
  /** Our request id of the paid lookup (the ledger row's). */
  readonly requestId: string;
  readonly createdAt: string;
}

/**
 * Idempotency records. A record is claimed in the debit's own transaction (DebitWriter) before the
 * account is debited, so the record, the debit and its ledger row commit together or not at all;
 * the claim is an insert that a live record of the same account and key refuses, which is what
 * makes two racing requests debit once on either engine: on PostgreSQL the second insert waits for
 * the first transaction and then finds its row, on SQLite write transactions are serial.
 * Records older than the retention are ignored by `find`, replaced by a new claim and removed by
 * `purgeExpired`; every method takes the cut-off (ISO text, compared as text like every timestamp):
 * a record created at or before it has expired, so a key lives for exactly the retention.
 */
export class IdempotencyRepository {
  /**
   * The two queries of every keyed lookup, built and compiled once (PreparedQuery): building them
   * with Kysely per call was most of what a key added to a lookup's allocations (test/cost/).
   */
  private readonly findLive: PreparedQuery<Selectable<IdempotencyKeysTable>>;
  private readonly claimKey: PreparedQuery<{ account_id: number }>;

  /** `storage.read` runs the find at once on SQLite (no promise when the connection is idle). */
  constructor(private readonly storage: Pick<Storage, 'db' | 'read'>) {
    const db = storage.db;
    this.findLive = new PreparedQuery(3, (p) =>
      db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', p(0)).where('idempotency_key', '=', p(1)).where('created_at', '>', p(2)),
    );
    // Arguments: account, key, operation, query, result, charged, request id, created at, cut-off.
    this.claimKey = new PreparedQuery(9, (p) => {
      const values = { operation: p(2), query: p(3), result: p(4), charged: p(5), request_id: p(6), created_at: p(7) };
      return db
        .insertInto('idempotency_keys')
        .values({ account_id: p(0), idempotency_key: p(1), ...values })
        .onConflict((oc) => oc.columns(['account_id', 'idempotency_key']).doUpdateSet(values).where('idempotency_keys.created_at', '<=', p(8)))
        .returning('account_id');
    });
  }

  /**
   * The live record of `key` for the account, if any (read outside the debit's transaction); at
   * once on SQLite when its connection is idle (Storage.read).
   */
  find(accountId: number, key: string, cutoff: string): MaybePromise<IdempotencyRecord | undefined> {
    return andThen(this.storage.read(this.findLive.compile([accountId, key, cutoff])), ({ rows }) => recordOf(rows[0]));
  }

  /**
   * Writes the record unless the account already holds a live one under the key (an expired one is
   * replaced). True when this transaction now holds the key, false when another lookup does.
   */
  claim(tx: Tx, accountId: number, record: IdempotencyRecord, cutoff: string): MaybePromise<boolean> {
    // At once on SQLite (Tx.run): the keyed debit's transaction stays synchronous there.
    return andThen(this.claimKey.run(tx, accountId, record.key, record.operation, record.query, record.result, record.charged, record.requestId, record.createdAt, cutoff), ({ rows }) => rows.length > 0);
  }

  /**
   * Removes a claim whose debit the balance did not cover, or whose debit was reversed (its answer
   * undelivered): an unpaid lookup leaves no record. With `requestId`, only the record that
   * request made.
   */
  async release(tx: Tx, accountId: number, key: string, requestId?: string): Promise<void> {
    let query = tx.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('idempotency_key', '=', key);
    if (requestId !== undefined) query = query.where('request_id', '=', requestId);
    await query.execute();
  }

  /** Deletes the records created at or before `cutoff` (expired); returns how many. */
  async purgeExpired(tx: Tx, cutoff: string): Promise<number> {
    const result = await tx.db.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function recordOf(row: Selectable<IdempotencyKeysTable> | undefined): IdempotencyRecord | undefined {
  if (!row) return undefined;
  return {
    key: row.idempotency_key,
    operation: row.operation,
    query: row.query,
    result: row.result,
    charged: row.charged,
    requestId: row.request_id,
    createdAt: row.created_at,
  };
}
