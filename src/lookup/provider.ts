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
      /**
       * `cache` when an upstream's answer came from the shared upstream cache rather than a call
       * (UpstreamAnswer.via): the ledger and X-Lookup-Source then say `cache`, not the upstream.
       */
      readonly via?: 'upstream' | 'cache';
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

/** What the ledger's `source` and the X-Lookup-Source header say of the local store's answers. */
export const STORE_SOURCE = 'store';

/** What the ledger's `source` and the X-Lookup-Source header say of an upstream answer served from the shared cache. */
export const CACHE_SOURCE = 'cache';

/** The provenance of a found answer (issue 32): `cache`, or the source that answered. */
export function provenanceOf(answer: Extract<ProviderAnswer, { readonly status: 'found' }>): string {
  return answer.via === 'cache' ? CACHE_SOURCE : answer.source;
}
