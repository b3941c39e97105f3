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
  /** The LookupResult paid for, as JSON text (kept in idempotency_results, migration 0020). */
  readonly result: string;
  readonly charged: number;
  /** Our request id of the paid lookup (the ledger row's). */
  readonly requestId: string;
  readonly createdAt: string;
}

/** A record to claim: with the frozen result object its text was encoded from, when there is one. */
export interface RecordToClaim extends IdempotencyRecord {
  /**
   * The result object `result` is the JSON of, when it is frozen (result-memo.ts): the same object
   * for every lookup of a cached record, so one stored answer serves them all (AnswerBatch).
   */
  readonly answer?: object | undefined;
}

/** A stored answer that later records may refer to: its row and when it was written. */
interface SharedAnswer {
  readonly id: number;
  readonly storedMs: number;
}

/**
 * The answers one debit transaction stores or shares. A record whose answer is a frozen result
 * already stored (by this process, committed, and younger than half the retention) refers to that
 * row instead of storing the answer again; so does a second record of the same answer in the same
 * transaction. Rows are purged only at twice the retention (IdempotencyRepository.purgeExpired):
 * a record made within half the retention of its answer's row expires at least half a retention
 * before the row goes, which also covers clocks of several instances that disagree by less.
 */
export class AnswerBatch {
  private readonly pending = new Map<object, SharedAnswer>();

  constructor(
    private readonly shared: WeakMap<object, SharedAnswer>,
    private readonly retentionMs: number,
  ) {}

  /** Forgets what an attempt of the transaction stored: it is run again, or it failed. */
  reset(): void {
    this.pending.clear();
  }

  /** The row a record of `answer` made at `createdMs` may refer to, if any. */
  reusable(answer: object, createdMs: number): number | undefined {
    const entry = this.pending.get(answer) ?? this.shared.get(answer);
    return entry !== undefined && createdMs - entry.storedMs < this.retentionMs / 2 ? entry.id : undefined;
  }

  stored(answer: object, id: number, storedMs: number): void {
    this.pending.set(answer, { id, storedMs });
  }

  /** After the COMMIT: the answers this transaction stored may be shared by later ones. */
  committed(): void {
    for (const [answer, entry] of this.pending) this.shared.set(answer, entry);
    this.pending.clear();
  }
}

/** The key's row joined with its answer's text (NULL only if the answer's row were missing). */
type FoundRow = Selectable<IdempotencyKeysTable> & { result: string | null };

/**
 * Idempotency records. A record is claimed in the debit's own transaction (DebitWriter) before the
 * account is debited, so the record, its answer, the debit and its ledger row commit together or
 * not at all; the claim is an insert that a live record of the same account and key refuses,
 * which is what makes two racing requests debit once on either engine: on PostgreSQL the second
 * insert waits for the first transaction and then finds its row, on SQLite write transactions are
 * serial. Records older than the retention are ignored by `find`, replaced by a new claim and
 * removed by `purgeExpired`; every method takes the cut-off (ISO text, compared as text like every
 * timestamp): a record created at or before it has expired, so a key lives for exactly the
 * retention.
 *
 * A record refers to its answer in idempotency_results (migration 0020) rather than holding it:
 * the answer of a cached record is stored once and shared (AnswerBatch), which is most of what a
 * key's first lookup used to add to the debit's SQLite work (issue 35).
 */
export class IdempotencyRepository {
  /**
   * The queries of every keyed lookup, built and compiled once (PreparedQuery): building them
   * with Kysely per call was most of what a key added to a lookup's allocations (test/cost/).
   */
  private readonly findLive: PreparedQuery<FoundRow>;
  private readonly storeAnswer: PreparedQuery<{ id: number }>;
  private readonly claimKey: PreparedQuery<{ account_id: number }>;
  /** Committed answers by the frozen result they were encoded from; held weakly, as result-memo.ts. */
  private readonly shared = new WeakMap<object, SharedAnswer>();

  /** `storage.read` runs the find at once on SQLite (no promise when the connection is idle). */
  constructor(private readonly storage: Pick<Storage, 'db' | 'read'>) {
    const db = storage.db;
    this.findLive = new PreparedQuery(3, (p) =>
      db
        .selectFrom('idempotency_keys')
        .leftJoin('idempotency_results', 'idempotency_results.id', 'idempotency_keys.result_id')
        .selectAll('idempotency_keys')
        .select('idempotency_results.result')
        .where('idempotency_keys.account_id', '=', p(0))
        .where('idempotency_keys.idempotency_key', '=', p(1))
        .where('idempotency_keys.created_at', '>', p(2)),
    );
    this.storeAnswer = new PreparedQuery(2, (p) => db.insertInto('idempotency_results').values({ result: p(0), stored_at: p(1) }).returning('id'));
    // Arguments: account, key, operation, query, result id, charged, request id, created at, cut-off.
    this.claimKey = new PreparedQuery(9, (p) => {
      const values = { operation: p(2), query: p(3), result_id: p(4), charged: p(5), request_id: p(6), created_at: p(7) };
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

  /** What one debit transaction stores or shares of its records' answers (see AnswerBatch). */
  answerBatch(retentionMs: number): AnswerBatch {
    return new AnswerBatch(this.shared, retentionMs);
  }

  /**
   * Writes the record unless the account already holds a live one under the key (an expired one is
   * replaced), its answer stored first unless `answers` has a row it may share. True when this
   * transaction now holds the key, false when another lookup does (an answer stored for it stays
   * until the purge, and may be shared meanwhile).
   */
  claim(tx: Tx, accountId: number, record: RecordToClaim, cutoff: string, answers: AnswerBatch): MaybePromise<boolean> {
    // At once on SQLite (Tx.run): the keyed debit's transaction stays synchronous there.
    const answer = record.answer;
    // Only an answer that may be shared needs its time as a number (most keyed lookups' is).
    const createdMs = answer === undefined ? Number.NaN : Date.parse(record.createdAt);
    const shared = answer === undefined ? undefined : answers.reusable(answer, createdMs);
    const answerId =
      shared ??
      andThen(this.storeAnswer.run(tx, record.result, record.createdAt), ({ rows }) => {
        const id = rows[0]?.id;
        if (id === undefined) throw new Error('storing an idempotency record\'s answer returned no id');
        if (answer !== undefined) answers.stored(answer, id, createdMs);
        return id;
      });
    return andThen(answerId, (id) =>
      andThen(this.claimKey.run(tx, accountId, record.key, record.operation, record.query, id, record.charged, record.requestId, record.createdAt, cutoff), ({ rows }) => rows.length > 0),
    );
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

  /**
   * Deletes the records created at or before `cutoff` (expired), and the answers stored at or
   * before `answerCutoff` (twice the retention ago: no live record refers to them, AnswerBatch);
   * returns how many records went.
   */
  async purgeExpired(tx: Tx, cutoff: string, answerCutoff: string): Promise<number> {
    const result = await tx.db.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    await tx.db.deleteFrom('idempotency_results').where('stored_at', '<=', answerCutoff).execute();
    return Number(result.numDeletedRows);
  }
}

function recordOf(row: FoundRow | undefined): IdempotencyRecord | undefined {
  if (!row) return undefined;
  // Purged only at twice the retention, an answer outlives its records: a missing one is a bug.
  if (row.result === null) throw new Error(`the idempotency record of account ${row.account_id} names answer ${row.result_id}, which is not stored`);
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
