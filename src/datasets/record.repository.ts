import { sql, type InsertResult } from 'kysely';
import type { Db, Tx } from '../storage/database.js';
import { PreparedQuery } from '../storage/prepared-query.js';

export interface StoredRecord {
  readonly dataset: string;
  readonly lookupKey: string;
  /** JSON text of the record. */
  readonly document: string;
  readonly source: string;
}

/**
 * A record that answers one operation only (`operation_records`, migration 0014): an answer of the
 * original service, kept as it answered that operation (keptPerOperation).
 */
export interface StoredOperationRecord {
  readonly operation: string;
  readonly lookupKey: string;
  /** JSON text of the record. */
  readonly document: string;
  readonly source: string;
}

export interface StoredRating {
  readonly ratingKey: string;
  readonly makeNorm: string;
  readonly modelNorm: string;
  readonly document: string;
  readonly source: string;
}

/** SQLite allows 32766 bound variables per statement; 6 columns x 500 ratings stays far below. */
const BATCH = 500;

/**
 * Rows per statement of upsertRecords (4 parameters each, plus the shared timestamp). Writing
 * 1 M records with better-sqlite3 directly, 500 or 1,000 rows per statement were no faster and 10
 * rows were slower.
 */
const BULK_ROWS = 100;

/**
 * A multi-row upsert of `rows` records, built and compiled once. Argument 0 is updated_at, then
 * dataset, lookup_key, document and source per row. A conflicting row whose document and source
 * are unchanged is left alone (no write, no new updated_at) and is not counted as affected.
 */
function bulkUpsert(db: Db, rows: number): PreparedQuery<InsertResult> {
  return new PreparedQuery(1 + rows * 4, (p) =>
    db
      .insertInto('records')
      .values(
        Array.from({ length: rows }, (_, i) => ({
          dataset: p(1 + i * 4),
          lookup_key: p(2 + i * 4),
          document: p(3 + i * 4),
          source: p(4 + i * 4),
          updated_at: p(0),
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['dataset', 'lookup_key'])
          .doUpdateSet((eb) => ({
            document: eb.ref('excluded.document'),
            source: eb.ref('excluded.source'),
            updated_at: eb.ref('excluded.updated_at'),
          }))
          .where((eb) => eb.or([eb('records.document', '<>', eb.ref('excluded.document')), eb('records.source', '<>', eb.ref('excluded.source'))])),
      ),
  );
}

/** Imported records: vehicles and MOT histories by key, Euro NCAP ratings, free test plates. */
export class RecordRepository {
  private readonly documentByKey: PreparedQuery<{ document: string }>;
  /** Every vehicle and MOT lookup the record cache does not answer runs this one. */
  private readonly answerByKey: PreparedQuery<{ document: string; kept: number }>;
  private readonly upsertMany: PreparedQuery<InsertResult>;
  private readonly upsertOne: PreparedQuery<InsertResult>;

  constructor(private readonly db: Db) {
    this.documentByKey = new PreparedQuery(2, (p) =>
      db.selectFrom('records').select('document').where('dataset', '=', p(0)).where('lookup_key', '=', p(1)),
    );
    // One statement, two primary-key probes: the operation's own record (kept 0) and its
    // dataset's (kept 1); a lookup costs one round trip either way.
    this.answerByKey = new PreparedQuery(3, (p) =>
      db
        .selectFrom('operation_records')
        .select(['document', sql<number>`0`.as('kept')])
        .where('operation', '=', p(0))
        .where('lookup_key', '=', p(2))
        .unionAll(db.selectFrom('records').select(['document', sql<number>`1`.as('kept')]).where('dataset', '=', p(1)).where('lookup_key', '=', p(2))),
    );
    this.upsertMany = bulkUpsert(db, BULK_ROWS);
    this.upsertOne = bulkUpsert(db, 1);
  }

  async findDocument(dataset: string, lookupKey: string): Promise<string | undefined> {
    const { rows } = await this.documentByKey.execute(this.db, dataset, lookupKey);
    return rows[0]?.document;
  }

  /**
   * The record that answers `operation` for a key: the one kept for that operation (an answer of
   * the original, operation_records) before the one of its dataset, which serves every operation
   * of the dataset (records).
   */
  async findAnswer(operation: string, dataset: string, lookupKey: string): Promise<string | undefined> {
    const { rows } = await this.answerByKey.execute(this.db, operation, dataset, lookupKey);
    if (rows.length < 2) return rows[0]?.document;
    return (rows.find((r) => r.kept === 0) ?? rows[0])?.document;
  }

  async findRatingsByMake(makeNorm: string): Promise<Array<{ document: string; modelNorm: string }>> {
    const rows = await this.db.selectFrom('ncap_ratings').select(['document', 'model_norm']).where('make_norm', '=', makeNorm).execute();
    return rows.map((r) => ({ document: r.document, modelNorm: r.model_norm }));
  }

  /**
   * The one write of records, for every importer: inserts or replaces records with statements
   * compiled once, and leaves a record whose document and source are unchanged as it is (no write,
   * its updated_at kept), so re-importing a file rewrites nothing: updated_at stays the time the
   * record last changed, and an unchanged re-import costs reads instead of index and WAL writes
   * (issue 4). Of several records with one key, the last wins. Returns how many records were
   * inserted or changed (the RDW importer reports it; the rest are "unchanged").
   */
  async upsertRecords(tx: Tx, records: readonly StoredRecord[], updatedAt: string): Promise<number> {
    let changed = 0;
    const args: unknown[] = [updatedAt];
    // One statement may not touch a row twice on PostgreSQL ("ON CONFLICT DO UPDATE command cannot
    // affect row a second time"): a record whose key is already in the statement being filled
    // closes it, so the later record lands in a later statement and wins.
    const keys = new Set<string>();
    let rows = 0;
    const flush = async (): Promise<void> => {
      if (rows === BULK_ROWS) {
        const result = await this.upsertMany.run(tx, ...args);
        changed += Number(result.numAffectedRows ?? 0n);
      } else {
        for (let i = 1; i < args.length; i += 4) {
          const result = await this.upsertOne.run(tx, updatedAt, args[i], args[i + 1], args[i + 2], args[i + 3]);
          changed += Number(result.numAffectedRows ?? 0n);
        }
      }
      args.length = 1;
      keys.clear();
      rows = 0;
    };
    for (const r of records) {
      const key = `${r.dataset}\u0000${r.lookupKey}`;
      if (keys.has(key)) await flush();
      keys.add(key);
      args.push(r.dataset, r.lookupKey, r.document, r.source);
      rows += 1;
      if (rows === BULK_ROWS) await flush();
    }
    if (rows > 0) await flush();
    return changed;
  }

  /**
   * Inserts or replaces records kept for one operation, in the caller's transaction; as
   * upsertRecords, an unchanged record is left alone and of several with one key the last wins.
   */
  async upsertOperationRecords(tx: Tx, records: readonly StoredOperationRecord[], updatedAt: string): Promise<void> {
    // Deduplicated first: one statement may not touch a row twice on PostgreSQL.
    const last = new Map<string, StoredOperationRecord>();
    for (const r of records) last.set(`${r.operation}\u0000${r.lookupKey}`, r);
    const rows = [...last.values()];
    for (let i = 0; i < rows.length; i += BATCH) {
      await tx.db
        .insertInto('operation_records')
        .values(rows.slice(i, i + BATCH).map((r) => ({ operation: r.operation, lookup_key: r.lookupKey, document: r.document, source: r.source, updated_at: updatedAt })))
        .onConflict((oc) =>
          oc
            .columns(['operation', 'lookup_key'])
            .doUpdateSet((eb) => ({ document: eb.ref('excluded.document'), source: eb.ref('excluded.source'), updated_at: eb.ref('excluded.updated_at') }))
            .where((eb) => eb.or([eb('operation_records.document', '<>', eb.ref('excluded.document')), eb('operation_records.source', '<>', eb.ref('excluded.source'))])),
        )
        .execute();
    }
  }

  async upsertRatings(tx: Tx, ratings: readonly StoredRating[], updatedAt: string): Promise<void> {
    for (let i = 0; i < ratings.length; i += BATCH) {
      const chunk = ratings.slice(i, i + BATCH);
      await tx.db
        .insertInto('ncap_ratings')
        .values(
          chunk.map((r) => ({
            rating_key: r.ratingKey,
            make_norm: r.makeNorm,
            model_norm: r.modelNorm,
            document: r.document,
            source: r.source,
            updated_at: updatedAt,
          })),
        )
        .onConflict((oc) =>
          oc.column('rating_key').doUpdateSet((eb) => ({
            make_norm: eb.ref('excluded.make_norm'),
            model_norm: eb.ref('excluded.model_norm'),
            document: eb.ref('excluded.document'),
            source: eb.ref('excluded.source'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    }
  }

  /** Records by dataset; records kept for one operation are counted under the operation's name. */
  async countByDataset(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('records')
      .select(['dataset', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('dataset')
      .execute();
    const kept = await this.db
      .selectFrom('operation_records')
      .select(['operation', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('operation')
      .execute();
    const ratings = await this.db.selectFrom('ncap_ratings').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    const counts: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const r of rows) counts[r.dataset] = Number(r.n);
    for (const r of kept) counts[r.operation] = (counts[r.operation] ?? 0) + Number(r.n);
    if (Number(ratings.n) > 0) counts.CheckEuroNCap = Number(ratings.n);
    return counts;
  }

  async isTestPlate(operation: string, lookupKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('test_plates')
      .select('operation')
      .where('operation', '=', operation)
      .where('lookup_key', '=', lookupKey)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Makes a plate free, in the caller's transaction (with its audit row); false when it already was. */
  async addTestPlate(tx: Tx, operation: string, lookupKey: string, createdAt: string): Promise<boolean> {
    const result = await tx.db
      .insertInto('test_plates')
      .values({ operation, lookup_key: lookupKey, created_at: createdAt })
      .onConflict((oc) => oc.columns(['operation', 'lookup_key']).doNothing())
      .executeTakeFirst();
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }

  /** Makes a test plate cost again, in the caller's transaction; false when it was none. */
  async removeTestPlate(tx: Tx, operation: string, lookupKey: string): Promise<boolean> {
    const result = await tx.db
      .deleteFrom('test_plates')
      .where('operation', '=', operation)
      .where('lookup_key', '=', lookupKey)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async listTestPlates(): Promise<Array<{ operation: string; lookupKey: string }>> {
    const rows = await this.db.selectFrom('test_plates').select(['operation', 'lookup_key']).orderBy('operation').orderBy('lookup_key').execute();
    return rows.map((r) => ({ operation: r.operation, lookupKey: r.lookup_key }));
  }
}
