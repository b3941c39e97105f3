import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import type { RegcheckClient } from './regcheck.client.js';
import { isRegcheckPayload } from './regcheck-answers.js';

/**
 * The original Car Registration API as the last provider of every operation it is allowed
 * (REGCHECK_OPERATIONS): asked only when the store and the free public registers do not know the
 * vehicle. Its record is what the operation's codec read from the original's answer, served as
 * the original sent it (a Vehicle's vehicleJson byte for byte); the pipeline charges it like any
 * answer with data. "Lookup failed" is not-found (free, cached for REGCHECK_NOT_FOUND_TTL_S); every
 * other fault is unavailable (free, counted by the breaker).
 */
export class RegcheckProvider implements Provider {
  readonly name = 'regcheck';

  constructor(private readonly client: RegcheckClient) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const answer = await this.client.lookup(query);
    if (answer.status !== 'found') return unansweredAs(answer);
    // A payload cached for another operation under one key, or of an older shape, is not an answer.
    if (!isRegcheckPayload(answer.payload) || answer.payload.operation !== query.operation.name) {
      return { status: 'unavailable', reason: 'regcheck: a cached answer of another shape' };
    }
    return foundAs(answer, answer.payload.record, this.name);
  }
}
