import type { Db, Tx } from '../storage/database.js';
import { PreparedQuery } from '../storage/prepared-query.js';

export interface StoredRecord {
  readonly dataset: string;
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

/** SQLite allows 32766 bound variables per statement; 5 columns x 500 rows stays far below. */
const BATCH = 500;

/** Imported records: vehicles and MOT histories by key, Euro NCAP ratings, free test plates. */
export class RecordRepository {
  /** Every vehicle and MOT lookup runs this one. */
  private readonly documentByKey: PreparedQuery<{ document: string }>;

  constructor(private readonly db: Db) {
    this.documentByKey = new PreparedQuery(2, (p) =>
      db.selectFrom('records').select('document').where('dataset', '=', p(0)).where('lookup_key', '=', p(1)),
    );
  }

  async findDocument(dataset: string, lookupKey: string): Promise<string | undefined> {
    const { rows } = await this.documentByKey.execute(this.db, dataset, lookupKey);
    return rows[0]?.document;
  }

  async findRatingsByMake(makeNorm: string): Promise<Array<{ document: string; modelNorm: string }>> {
    const rows = await this.db.selectFrom('ncap_ratings').select(['document', 'model_norm']).where('make_norm', '=', makeNorm).execute();
    return rows.map((r) => ({ document: r.document, modelNorm: r.model_norm }));
  }

  /** Inserts or replaces records (re-importing a key replaces it). */
  async upsertRecords(trx: Tx, records: readonly StoredRecord[], updatedAt: string): Promise<void> {
    for (let i = 0; i < records.length; i += BATCH) {
      const chunk = records.slice(i, i + BATCH);
      await trx
        .insertInto('records')
        .values(chunk.map((r) => ({ dataset: r.dataset, lookup_key: r.lookupKey, document: r.document, source: r.source, updated_at: updatedAt })))
        .onConflict((oc) =>
          oc.columns(['dataset', 'lookup_key']).doUpdateSet((eb) => ({
            document: eb.ref('excluded.document'),
            source: eb.ref('excluded.source'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    }
  }

  async upsertRatings(trx: Tx, ratings: readonly StoredRating[], updatedAt: string): Promise<void> {
    for (let i = 0; i < ratings.length; i += BATCH) {
      const chunk = ratings.slice(i, i + BATCH);
      await trx
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

  async countByDataset(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('records')
      .select(['dataset', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('dataset')
      .execute();
    const ratings = await this.db.selectFrom('ncap_ratings').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    const counts: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const r of rows) counts[r.dataset] = Number(r.n);
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

  async addTestPlate(operation: string, lookupKey: string, createdAt: string): Promise<void> {
    await this.db
      .insertInto('test_plates')
      .values({ operation, lookup_key: lookupKey, created_at: createdAt })
      .onConflict((oc) => oc.columns(['operation', 'lookup_key']).doNothing())
      .execute();
  }

  async removeTestPlate(operation: string, lookupKey: string): Promise<boolean> {
    const result = await this.db
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
