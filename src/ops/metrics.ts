import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LookupObserver } from '../lookup/lookup-pipeline.js';

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics implements LookupObserver {
  readonly registry = new Registry();
  private readonly lookups: Counter<'operation' | 'interface' | 'outcome'>;
  private readonly latency: Histogram<'interface' | 'outcome'>;
  private readonly credits: Counter<'operation' | 'interface'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;

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
    this.httpRequests = new Counter({
      name: 'vehicle_lookup_http_requests_total',
      help: 'HTTP requests by method, route and status code',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
  }

  onLookup(event: { operation: string; interface: string; outcome: string; seconds: number; charged: number }): void {
    this.lookups.inc({ operation: event.operation, interface: event.interface, outcome: event.outcome });
    this.latency.observe({ interface: event.interface, outcome: event.outcome === 'success' ? 'success' : 'error' }, event.seconds);
    if (event.charged > 0) this.credits.inc({ operation: event.operation, interface: event.interface }, event.charged);
  }
}
