import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { RecordRepository } from '../../datasets/record.repository.js';
import type { Provider, ProviderAnswer } from '../provider.js';
import type { RecordCache } from './record-cache.js';

function numberField(doc: Record<string, unknown>, name: string): number {
  const v = doc[name];
  return typeof v === 'number' ? v : Number.MAX_SAFE_INTEGER;
}

/** Answers every operation from records the operator imported (and the bundled sample data). */
export class LocalStoreProvider implements Provider {
  readonly name = 'local';

  constructor(
    private readonly records: RecordRepository,
    private readonly cache?: RecordCache,
  ) {}

  /** A cached record is answered at once, without a promise (the lookup path's common case). */
  find(query: LookupQuery): ProviderAnswer | Promise<ProviderAnswer> {
    const { dataset } = query.operation;
    if (dataset.kind === 'ncap') return this.searchRatings(query);
    const cached = this.cache?.get(dataset.name, query.key);
    if (cached !== undefined) return { status: 'found', record: cached, source: this.name };
    return this.read(dataset.name, query.key);
  }

  private async read(datasetName: string, key: string): Promise<ProviderAnswer> {
    const document = await this.records.findDocument(datasetName, key);
    if (document === undefined) return { status: 'not-found' };
    // Frozen: the cached object is shared by every answer, and nothing may change it.
    const record = deepFreeze(JSON.parse(document) as unknown);
    this.cache?.set(datasetName, key, record);
    return { status: 'found', record, source: this.name };
  }

  /** Make equal, model contained, both case-insensitive (issue 2); ordered as Euro NCAP sorts. */
  private async searchRatings(query: LookupQuery): Promise<ProviderAnswer> {
    const make = query.values.Make ?? '';
    const model = query.values.Model ?? '';
    const rows = await this.records.findRatingsByMake(make);
    const ratings = rows
      .filter((r) => r.modelNorm.includes(model))
      .map((r) => JSON.parse(r.document) as Record<string, unknown>)
      .sort((a, b) => numberField(a, 'SortOrder') - numberField(b, 'SortOrder') || numberField(b, 'Year') - numberField(a, 'Year') || numberField(a, 'Id') - numberField(b, 'Id'));
    return { status: 'found', record: ratings, source: this.name };
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
