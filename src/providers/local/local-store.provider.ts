import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { RecordRepository } from '../../datasets/record.repository.js';
import { STORE_SOURCE, type Provider, type ProviderAnswer } from '../../lookup/provider.js';

function numberField(doc: Record<string, unknown>, name: string): number {
  const v = doc[name];
  return typeof v === 'number' ? v : Number.MAX_SAFE_INTEGER;
}

/** Answers every operation from records the operator imported (and the bundled sample data). */
export class LocalStoreProvider implements Provider {
  readonly name = 'local';

  constructor(private readonly records: RecordRepository) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const { dataset } = query.operation;
    if (dataset.kind === 'ncap') return this.searchRatings(query);
    // The operation's own record (an answer of the original) before its dataset's (findAnswer).
    const document = await this.records.findAnswer(query.operation.name, dataset.name, query.key);
    if (document === undefined) return { status: 'not-found' };
    // Cacheable: a stored record changes only by a commit, which moves the change counter (or by
    // an import in this process, which clears the pipeline's record cache).
    return { status: 'found', record: JSON.parse(document) as unknown, source: STORE_SOURCE, cacheable: true };
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
    // None here is "not found", so a later provider of the chain (the original service) is asked;
    // with none, the codec answers the empty list (recordWhenAbsent), free as before.
    if (ratings.length === 0) return { status: 'not-found' };
    return { status: 'found', record: ratings, source: STORE_SOURCE };
  }
}
