import type { UpstreamAlertSink } from '../../alerts/upstream-balance-alerts.js';
import type { PaidUpstreamSettings, RoutingConfig } from '../../config/paid-upstream-config.js';
import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../storage/database.js';
import type { UpstreamMonitor } from '../upstream/upstream-monitor.js';
import { UpstreamStateRepository } from '../upstream/upstream-state.repository.js';
import { cheapestFirst } from './price-order.js';
import { UpstreamPolicy, type PolicyStatus } from './upstream-policy.js';

/** A paid upstream as its adapter registers it: the provider and its generic settings (readPaidUpstream). */
export interface PaidUpstream {
  readonly provider: Provider;
  readonly settings: PaidUpstreamSettings;
}

export interface UpstreamRouterDeps {
  readonly routing: RoutingConfig;
  readonly monitor: UpstreamMonitor;
  readonly clock: Clock;
  readonly db: Db;
  readonly log?: { warn(message: string, error?: unknown): void } | undefined;
}

/**
 * The router (issue 32; DESIGN.md "Routing"): the one place that chooses between paid upstreams.
 * Each operation's chain is the local store, the free registers, then one routed provider
 * (`routed`) that asks the paid upstreams of that operation cheapest first (price-order.ts) with
 * the fallback policy below; each upstream's policy (funds, quota, refused key, budget: the
 * UpstreamPolicy) gates its calls for every instance through UpstreamContext.gate, after its
 * cache, so a source that is out still serves what it cached.
 *
 * Fallback, per answer of a paid source:
 * - found: the answer (the caller pays our price once, whatever was tried before);
 * - not found: the answer ("Lookup failed", free), unless UPSTREAM_FALLBACK_ON_NOT_FOUND, which
 *   asks the next paid source (each call costs the operator);
 * - unavailable (timeout, 5xx, an HTML page, a connection error, a source that is out or cooling
 *   down): the next paid source at once. Every source failing is UPSTREAM_UNAVAILABLE (free).
 */
export class UpstreamRouter {
  private readonly policies = new Map<string, UpstreamPolicy>();
  private readonly states: UpstreamStateRepository;

  constructor(private readonly deps: UpstreamRouterDeps) {
    this.states = new UpstreamStateRepository(deps.db);
  }

  get routing(): RoutingConfig {
    return this.deps.routing;
  }

  /** The policy of a paid upstream, made on its first registration. */
  policyFor(settings: PaidUpstreamSettings): UpstreamPolicy {
    let policy = this.policies.get(settings.name);
    if (!policy) {
      policy = new UpstreamPolicy({ settings, monitor: this.deps.monitor, clock: this.deps.clock, states: this.states, log: this.deps.log, currency: this.deps.routing.currency });
      this.policies.set(settings.name, policy);
    }
    return policy;
  }

  /** The gate of a provider by name (UpstreamContext.gate): a paid one's policy, nothing for the others. */
  gate(provider: string): Promise<string | undefined> | undefined {
    return this.policies.get(provider)?.gate();
  }

  /** The provider that asks `upstreams` for one operation, by price and policy. */
  routed(upstreams: readonly PaidUpstream[]): Provider {
    const entries = upstreams.map((u) => ({ provider: u.provider, policy: this.policyFor(u.settings) }));
    return new RoutedProvider(entries, this.deps.routing);
  }

  /** The paid upstreams in the order the router asks them now (the operator's view, tests). */
  order(names?: readonly string[]): string[] {
    const known = [...this.policies.values()].filter((p) => names === undefined || names.includes(p.name));
    return cheapestFirst(
      known.map((p) => ({ name: p.name, price: p.price })),
      this.deps.routing.order,
    ).map((p) => p.name);
  }

  /** Starts each policy's alerts and re-arms refused keys (the server, once). */
  async start(alerts?: UpstreamAlertSink): Promise<void> {
    for (const policy of this.policies.values()) await policy.start(alerts);
  }

  /** Every policy's writes done (close, tests). */
  async settled(): Promise<void> {
    for (const policy of this.policies.values()) await policy.settled();
  }

  /** Each paid upstream's routing state for the operator; `cooling` names those whose breaker is open here. */
  async status(cooling: (name: string) => { readonly until?: string } | undefined = () => undefined): Promise<Record<string, PolicyStatus>> {
    const out: Record<string, PolicyStatus> = {};
    for (const name of [...this.policies.keys()].sort()) {
      const policy = this.policies.get(name) as UpstreamPolicy;
      out[name] = await policy.status(cooling(name));
    }
    return out;
  }
}

/** One operation's paid upstreams behind one Provider: the last of its chain. */
class RoutedProvider implements Provider {
  readonly name = 'router';

  constructor(
    private readonly entries: ReadonlyArray<{ readonly provider: Provider; readonly policy: UpstreamPolicy }>,
    private readonly routing: RoutingConfig,
  ) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const ordered = cheapestFirst(
      this.entries.map((e) => ({ name: e.policy.name, price: e.policy.price, entry: e })),
      this.routing.order,
    );
    let unavailable: string | undefined;
    let notFound = false;
    for (const { entry } of ordered) {
      const answer = await entry.provider.find(query);
      // Its spend, out state and alerts are written before the next source is chosen or the caller answered.
      await entry.policy.settled();
      if (answer.status === 'found') return answer;
      if (answer.status === 'not-found') {
        notFound = true;
        if (!this.routing.fallbackOnNotFound) return answer;
        continue;
      }
      unavailable ??= answer.reason;
    }
    if (notFound || unavailable === undefined) return { status: 'not-found' };
    return { status: 'unavailable', reason: unavailable };
  }
}
