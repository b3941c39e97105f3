import { Counter, Gauge, type Registry } from 'prom-client';
import type { UpstreamMonitor } from '../upstream/upstream-monitor.js';
import type { PolicyStatus, RoutingState } from './upstream-policy.js';

/** Every routing state once; `satisfies` makes a new state a compile error here until it is listed. */
const STATES = Object.keys({
  ready: true,
  'cooling-down': true,
  'out-of-funds': true,
  quota: true,
  'over-budget': true,
  disabled: true,
} satisfies Record<RoutingState, true>) as RoutingState[];

/** Each paid upstream's routing state now (UpstreamRouter.status), as the state gauge reads it. */
export type RoutingStatusSource = () => Promise<Readonly<Record<string, Pick<PolicyStatus, 'state'>>>>;

/** The routing metrics of one registry: the state gauge reads the router once it exists. */
export interface RoutingMetrics {
  /** Gives the gauge the router's states (app.ts, once the router is built; until then it has no series), and where to warn when they cannot be read. */
  watch(status: RoutingStatusSource, log?: { warn(message: string, error?: unknown): void }): void;
}

/**
 * Prometheus metrics of the router (issue 32; docs/providers.md "Monitoring"), beside the
 * upstream metrics (upstream-metrics.ts):
 * - `vehicle_lookup_upstream_spend_total{provider,currency}`: what the paid upstreams' answers cost
 *   the operator in `currency` (UPSTREAM_CURRENCY), counted from the policy's `spend` event, which
 *   is told once the amount is in the store: this instance's share of the spend
 *   `/admin/api/providers` sums over every instance;
 * - `vehicle_lookup_upstream_routing_state{provider,state}`: one-hot, 1 for the state the router
 *   sees each paid upstream in now, 0 for the others. One-hot rather than a number per state: a
 *   state added later renumbers nothing, and `{state!="ready"} == 1` reads as it means.
 * The states are read from the store at each scrape (a few indexed reads per paid upstream); a
 * store that cannot be read leaves the last values and the scrape answers.
 */
export function registerRoutingMetrics(registry: Registry, monitor: UpstreamMonitor, currency: string): RoutingMetrics {
  let source: RoutingStatusSource | undefined;
  let log: { warn(message: string, error?: unknown): void } | undefined;
  const spend = new Counter({
    name: 'vehicle_lookup_upstream_spend_total',
    help: 'What the answers of paid upstream providers cost the operator, in the currency (UPSTREAM_CURRENCY), as added to the stored spend by this instance',
    labelNames: ['provider', 'currency'],
    registers: [registry],
  });
  new Gauge({
    name: 'vehicle_lookup_upstream_routing_state',
    help: 'Routing state of each paid upstream provider, one-hot: 1 for its state now (ready, cooling-down, out-of-funds, quota, over-budget, disabled), 0 for the others',
    labelNames: ['provider', 'state'],
    registers: [registry],
    async collect() {
      if (!source) return;
      let status: Readonly<Record<string, Pick<PolicyStatus, 'state'>>>;
      try {
        status = await source();
      } catch (error) {
        log?.warn('the routing state of the paid upstreams could not be read for /metrics', error);
        return;
      }
      for (const [provider, { state }] of Object.entries(status)) {
        for (const s of STATES) this.set({ provider, state: s }, s === state ? 1 : 0);
      }
    },
  });
  monitor.subscribe((event) => {
    if (event.type === 'spend') spend.inc({ provider: event.provider, currency }, event.amount);
  });
  return {
    watch(status, warn) {
      source = status;
      log = warn;
    },
  };
}
