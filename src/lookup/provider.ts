import type { LookupQuery } from './lookup-query.js';

/**
 * What a data source says about one query. `found` carries the parsed record: a vehicleJson
 * object, a UKMOT object, or (for ratings searches) an array, possibly empty.
 */
export type ProviderAnswer =
  | {
      readonly status: 'found';
      readonly record: unknown;
      readonly source: string;
      /**
       * True when the record stays the answer to this query until the storage change counter
       * moves (the local store's records). The lookup pipeline then deep-freezes it and answers
       * later lookups of the query from memory without asking (its record cache); the provider
       * does nothing for that. Leave it out for answers that expire otherwise (upstream answers
       * have their own TTL cache) or depend on more than the query's key (rating searches).
       */
      readonly cacheable?: boolean;
    }
  | { readonly status: 'not-found' }
  | { readonly status: 'unavailable'; readonly reason: string };

/**
 * A data source behind one or more operations (DESIGN.md "Data"). `find` is a plain `async`
 * function: the fast path for repeated lookups lives in the pipeline's record cache, not here.
 */
export interface Provider {
  readonly name: string;
  find(query: LookupQuery): Promise<ProviderAnswer>;
}
