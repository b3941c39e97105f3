/** A paid source as the ordering strategy sees it. */
export interface Priced {
  readonly name: string;
  /** Its effective price (the provider's own signal, else the configured one); undefined when unknown. */
  readonly price: number | undefined;
}

/**
 * The cost-based order of paid sources (LiteLLM's `lowest_cost` strategy, commercial-upstreams.md
 * §10): the sources UPSTREAM_ORDER names come first, in its order (it overrides price); then the
 * others cheapest first, a source without a known price after every priced one; equal prices in
 * name order, so every instance orders alike.
 */
export function cheapestFirst<T extends Priced>(sources: readonly T[], order: readonly string[]): T[] {
  const rank = (s: T): number => {
    const i = order.indexOf(s.name);
    return i < 0 ? order.length : i;
  };
  return [...sources].sort((a, b) => rank(a) - rank(b) || (a.price ?? Number.POSITIVE_INFINITY) - (b.price ?? Number.POSITIVE_INFINITY) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
