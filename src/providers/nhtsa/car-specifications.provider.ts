import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Clock } from '../../shared/clock.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import type { CanadianSpecsClient } from './canadian-specs.client.js';
import { carSpecificationsGrid } from './car-specifications.mapper.js';

/** The first year Transport Canada's specifications cover (upstream-sources.md §10.6). */
const FIRST_YEAR = 1971;

/**
 * CarSpecifications(make, model, year): vPIC's Canadian vehicle specifications (upstream-sources.md
 * §10.6) as a DataGrid record (`carSpecificationsGrid`). A year outside 1971 to next year is not
 * found without asking; so is an answer with no variant that names its model.
 */
export class CarSpecificationsProvider implements Provider {
  readonly name: string;

  constructor(
    private readonly client: CanadianSpecsClient,
    private readonly clock: Clock,
  ) {
    this.name = client.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const make = query.values.make ?? '';
    const model = query.values.model ?? '';
    const year = Number(query.values.year);
    if (make === '' || model === '' || !Number.isInteger(year) || year < FIRST_YEAR || year > this.clock.now().getUTCFullYear() + 1) {
      return { status: 'not-found' };
    }
    const answer = await this.client.specifications({ make, model, year });
    if (answer.status !== 'found') return unansweredAs(answer);
    const grid = carSpecificationsGrid(answer.payload);
    return grid ? foundAs(answer, grid, this.name) : { status: 'not-found' };
  }
}
