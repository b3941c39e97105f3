import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LookupObserver } from '../lookup/lookup-pipeline.js';
import { registerUpstreamMetrics } from '../providers/upstream/upstream-metrics.js';
import { UpstreamMonitor } from '../providers/upstream/upstream-monitor.js';

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics implements LookupObserver {
  readonly registry = new Registry();
  private readonly lookups: Counter<'operation' | 'interface' | 'outcome'>;
  private readonly latency: Histogram<'interface' | 'outcome'>;
  private readonly credits: Counter<'operation' | 'interface'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly rateLimited: Counter<'window' | 'interface'>;
  /** Rate-limited requests counted in-process because Redis did not answer (fail open, issue 5). */
  readonly rateLimitFallbacks: Counter;
  /**
   * The upstream providers' state and events. The services find it on this object (it is their
   * LookupObserver, see `monitorOf`); /readyz shows its snapshot.
   */
  readonly upstream = new UpstreamMonitor();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'vehicle_lookup_' });
    this.lookups = new Counter({
      name: 'vehicle_lookup_lookups_total',
      help: 'Lookups by operation, interface and outcome (success or the error code)',
      labelNames: ['operation', 'interface', 'outcome'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'vehicle_lookup_lookup_duration_seconds',
      help: 'Time to answer a lookup, from authentication to the debit',
      labelNames: ['interface', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.credits = new Counter({
      name: 'vehicle_lookup_credits_debited_total',
      help: 'Credits debited by successful lookups',
      labelNames: ['operation', 'interface'],
      registers: [this.registry],
    });
    this.rateLimited = new Counter({
      name: 'vehicle_lookup_rate_limited_total',
      help: "Requests refused by the account's rate limit, by window (second or day) and interface",
      labelNames: ['window', 'interface'],
      registers: [this.registry],
    });
    this.rateLimitFallbacks = new Counter({
      name: 'vehicle_lookup_rate_limit_fallbacks_total',
      help: 'Requests of rate-limited accounts counted in-process because Redis did not answer',
      registers: [this.registry],
    });
    this.httpRequests = new Counter({
      name: 'vehicle_lookup_http_requests_total',
      help: 'HTTP requests by method, route and status code',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    registerUpstreamMetrics(this.registry, this.upstream);
  }

  /**
   * Label children resolved once per label combination: prom-client hashes the label object on
   * every call otherwise, several times per lookup.
   */
  private readonly children = new Map<string, { lookups: { inc(): void }; latency: { observe(v: number): void }; credits: { inc(n: number): void } }>();

  onRateLimited(event: { window: string; interface: string }): void {
    this.rateLimited.inc({ window: event.window, interface: event.interface });
  }

  onLookup(event: { operation: string; interface: string; outcome: string; seconds: number; charged: number }): void {
    const key = `${event.operation}\u0000${event.interface}\u0000${event.outcome}`;
    let child = this.children.get(key);
    if (!child) {
      child = {
        lookups: this.lookups.labels({ operation: event.operation, interface: event.interface, outcome: event.outcome }),
        latency: this.latency.labels({ interface: event.interface, outcome: event.outcome === 'success' ? 'success' : 'error' }),
        credits: this.credits.labels({ operation: event.operation, interface: event.interface }),
      };
      this.children.set(key, child);
    }
    child.lookups.inc();
    child.latency.observe(event.seconds);
    if (event.charged > 0) child.credits.inc(event.charged);
  }
}
