import type { LookupQuery } from '../lookup/lookup-query.js';

/**
 * What a data source says about one query. `found` carries the parsed record: a vehicleJson
 * object, a UKMOT object, or (for ratings searches) an array, possibly empty.
 */
export type ProviderAnswer =
  | { readonly status: 'found'; readonly record: unknown; readonly source: string }
  | { readonly status: 'not-found' }
  | { readonly status: 'unavailable'; readonly reason: string };

/** A data source behind one or more operations (DESIGN.md "Data"). */
export interface Provider {
  readonly name: string;
  /** A plain answer when it is at hand (a cached record), else a promise of it. */
  find(query: LookupQuery): ProviderAnswer | Promise<ProviderAnswer>;
}
