import type { Clock } from '../../shared/clock.js';
import type { ProviderStatus } from './upstream-monitor.js';
import type { ProviderSpend, UpstreamSpendRepository } from './upstream-spend.js';
import type { PolicyStatus } from '../routing/upstream-policy.js';

/** A provider as `GET /admin/api/providers` and the console's providers page show it. */
export type ProviderView = ProviderStatus & {
  /** Its calls and cache answers today and over 30 days, every instance summed (upstream_stats). */
  readonly spend?: ProviderSpend;
  /** For a paid upstream, the router's view (issue 32): state and why, price, spend today and this month in the currency, budget, balance, last error. */
  readonly routing?: PolicyStatus & { readonly currency: string };
};

/** Which providers this instance's breaker holds open, and until when (UpstreamRouter.status's `cooling`). */
export function coolingIn(live: Readonly<Record<string, ProviderStatus>>): (name: string) => { readonly until?: string } | undefined {
  return (name) => {
    const p = live[name];
    return p?.status === 'down' ? (p.retryAt !== undefined ? { until: p.retryAt } : {}) : undefined;
  };
}

/**
 * The upstream providers for the operator: this instance's live state (breaker, latency, the
 * balance at a paid upstream, as /readyz reports them) with the spend every instance has written
 * to the store. A provider that is no longer configured but has spend in the last 30 days is
 * listed as disabled with its spend.
 */
export class ProvidersView {
  constructor(
    private readonly status: () => Record<string, ProviderStatus>,
    private readonly spend: Pick<UpstreamSpendRepository, 'spend'>,
    private readonly clock: Clock,
    /** Brings the live state up to date first (the balance every instance shares in the store). */
    private readonly refresh?: () => Promise<void>,
    /** The router's state of each paid upstream (UpstreamRouter.status), given which are cooling down here, and the currency. */
    private readonly routing?: {
      readonly currency: string;
      status(cooling: (name: string) => { readonly until?: string } | undefined): Promise<Record<string, PolicyStatus>>;
      /** The paid upstreams in the order the router asks them now (UpstreamRouter.order). */
      order(): string[];
    },
  ) {}

  /** The paid upstreams in the order the router would ask them now (cheapest first, UPSTREAM_ORDER first of all); empty without a router. */
  order(): string[] {
    return this.routing?.order() ?? [];
  }

  async view(): Promise<Record<string, ProviderView>> {
    await this.refresh?.();
    const status = this.status();
    const spend = await this.spend.spend(this.clock.now());
    const routing = this.routing;
    const routed = routing ? await routing.status(coolingIn(status)) : {};
    const names = [...new Set([...Object.keys(status), ...Object.keys(spend)])].sort();
    const out: Record<string, ProviderView> = {};
    for (const name of names) {
      const s = spend[name];
      const r = routed[name];
      out[name] = { ...(status[name] ?? { enabled: false, status: 'disabled', reason: 'not configured' }), ...(s ? { spend: s } : {}), ...(r && routing ? { routing: { ...r, currency: routing.currency } } : {}) };
    }
    return out;
  }
}
